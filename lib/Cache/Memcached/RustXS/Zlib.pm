package Cache::Memcached::RustXS::Zlib;

use strict;
use warnings;

use Carp ();
use Exporter 5.57 'import';
use Cache::Memcached::RustXS ();

our $VERSION = '1.000';

our @EXPORT_OK = qw(memGzip memGunzip compress uncompress compress_methods
                    override_compress_zlib restore_compress_zlib compress_zlib_overridden
                    fast_options);
our %EXPORT_TAGS = (all => \@EXPORT_OK);

# Tunables, read at each call (so `local` works). The XS gives them their
# defaults (the engine's: level 6, 64 MiB) when it loads; undef means the
# default too.
our $Level;       # memGzip's libdeflate level
our $MaxOutput;   # largest output memGunzip/uncompress will make (and, by
                  # default, compress_methods' reader: see _max_decoded_size)

# Compress::Zlib's error variable, shared: reading either name gives the same.
our $gzerrno;
*gzerrno = \$Compress::Zlib::gzerrno;

my @OPTIONS = qw(level max_output compress_ratio);

sub compress_methods {
    my %opt = @_;
    Cache::Memcached::RustXS::_check_options('compress_methods', \%opt, @OPTIONS);
    return Cache::Memcached::RustXS::_compress_methods(
        'gzip',
        exists $opt{level}      ? $opt{level}      : $Level,
        0,
        exists $opt{max_output} ? $opt{max_output} : Cache::Memcached::RustXS::_max_decoded_size(),
        $opt{compress_ratio},
    );
}

# fast_options' compress_threshold: values shorter than this are stored raw.
# From 224 bytes on, more than half of the values of bench/data/values cut
# to that size land in a smaller slab chunk gzip'd (under Fast's default
# compress_ratio); at 128 bytes, 1 to 15 % do (bench/threshold.pl).
my $FAST_THRESHOLD = 224;

sub fast_options {
    my %opt = @_;
    my ($settings, $ratio) = Cache::Memcached::RustXS::_fast_settings('fast_options', \%opt, $FAST_THRESHOLD,
                                                                     @OPTIONS);
    return (@$settings, compress_methods => compress_methods(%opt, compress_ratio => $ratio));
}

my %original;    # Compress::Zlib's own functions while overridden

# What replaces each of Compress::Zlib's functions.
my %REPLACEMENT = (
    memGzip    => \&memGzip,
    memGunzip  => \&_memGunzip_consuming,
    compress   => \&compress,
    uncompress => \&uncompress,
);

# Compress::Zlib::memGunzip, to the letter, for code that is not ours: it
# removes the gzip member it read from the caller's variable (so a loop over
# concatenated members ends), and anything that does not gunzip here is left
# to the original, whose failures (and what they leave in the variable) are
# then exactly the original's.
sub _memGunzip_consuming ($) {
    my $string = ref $_[0] ? $_[0] : \$_[0];
    my ($data, $used) = _gunzip_member($$string);
    return $original{memGunzip}->($_[0]) unless defined $used;
    substr($$string, 0, $used) = '';
    return $data;
}

sub override_compress_zlib {
    require Compress::Zlib;
    return 1 if %original;
    no strict 'refs';
    no warnings 'redefine';
    for my $name (sort keys %REPLACEMENT) {
        $original{$name} = \&{"Compress::Zlib::$name"};
        *{"Compress::Zlib::$name"} = $REPLACEMENT{$name};
    }
    return 1;
}

sub restore_compress_zlib {
    return 1 unless %original;
    no strict 'refs';
    no warnings 'redefine';
    *{"Compress::Zlib::$_"} = delete $original{$_} for sort keys %REPLACEMENT;
    return 1;
}

sub compress_zlib_overridden { return %original ? 1 : 0 }

1;
__END__

=head1 NAME

Cache::Memcached::RustXS::Zlib - Compress::Zlib-compatible gzip and zlib at libdeflate speed, for memcached clients

=head1 SYNOPSIS

    use Cache::Memcached::RustXS::Zlib qw(memGzip memGunzip compress uncompress);

    my $json  = '{"user":42,"name":"Ada","tags":["a","b","c"]}' x 20;
    my $gz    = memGzip($json);          # gzip, readable by every client
    my $plain = memGunzip($gz);          # undef if $gz is not valid gzip
    my $z     = compress($json, 6);      # zlib format
    my $back  = uncompress($z);

    # Cache::Memcached::Fast: compression through XSUBs, no Perl closures;
    # fast_options gives compress_threshold (224) and compress_methods, as
    # Fast compresses nothing without a threshold
    use Cache::Memcached::Fast;
    my $fast = Cache::Memcached::Fast->new({
        servers => ['127.0.0.1:11211'],
        Cache::Memcached::RustXS::Zlib::fast_options(),
    });

    # Cache::Memcached: its set path calls Compress::Zlib::memGzip by name,
    # so replace Compress::Zlib's functions for the whole process
    use Cache::Memcached;
    use Cache::Memcached::RustXS::GetParser;
    Cache::Memcached::RustXS::Zlib::override_compress_zlib();
    my $memd = Cache::Memcached->new({
        servers            => ['127.0.0.1:11211'],
        compress_threshold => 1_000,
        parser_class       => 'Cache::Memcached::RustXS::GetParser',
    });
    # ... and, if ever needed:
    Cache::Memcached::RustXS::Zlib::restore_compress_zlib();

=head1 DESCRIPTION

Cache::Memcached and Cache::Memcached::Fast gzip values with
Compress::Zlib's C<memGzip> at level 9 and gunzip them with C<memGunzip>.
This module provides the same four functions with the same interface and
the same stored format, computed by libdeflate with compressor and
decompressor state kept per thread instead of built and freed on every call.
Values it writes are read by every other client, and it reads what they
wrote.

What a stock reader needs set to read compressed values at all (ours or
anyone's; the tested releases are in
L<Cache::Memcached::RustXS/"Perls, clients and platforms">): Cache::Memcached and Cache::Memcached::Fast 0.28
nothing; Cache::Memcached::Fast before 0.28 C<compress_threshold> (0 or
more; 0 reads compressed values and writes everything raw) or
C<compress_methods>. Without either, those versions have no decompressor:
the first compressed value dies with "Not a CODE reference" and leaves the
connection out of step, so that later values on it come back as misses or
as another key's value. Such a reader breaks as soon as any writer
compresses, with or without this module.

=head1 FUNCTIONS

Nothing is exported by default; ask for any of the names below, or C<:all>.

=over 4

=item memGzip($data)

=item memGzip(\$data)

gzip: the 10-byte header Compress::Zlib writes (C<1f 8b 08 00>, mtime 0,
no extra flags, OS 255), raw deflate at C<$Level>, CRC-32 and size. Sets
C<$gzerrno> to 0.

=item memGunzip($gz)

=item memGunzip(\$gz)

The data, or C<undef> (with C<$gzerrno> set to C<Z_DATA_ERROR>, -3, as a
dualvar whose string is C<"data error">) when C<$gz> is not gzip: bad magic,
method other than deflate, reserved flag bits, a truncated header or deflate
stream, a wrong CRC-32 or size, or output over C<$MaxOutput>. FEXTRA, FNAME,
FCOMMENT and FHCRC are skipped. As in Compress::Zlib, a missing or partial
trailer (fewer than 8 bytes after the deflate stream) is accepted unchecked,
and bytes after the trailer are ignored. C<$gzerrno> is 0 after success.

=item compress($data [, $level])

zlib format (RFC 1950). C<$level> is zlib's, -1 (the default, meaning 6) to
9; other levels give C<undef>, as zlib refuses them (libdeflate's 10 to 12
are for C<memGzip> only).

=item uncompress($z)

The data, or C<undef> unless C<$z> is a zlib stream that ends, with a good
Adler-32, and decompresses to at most C<$MaxOutput> bytes.

=item compress_methods(%options)

Returns C<[ $compress, $decompress ]> for Cache::Memcached::Fast's
C<compress_methods> option: XSUBs it calls directly as
C<< $compress->(\$in, \$out) >> and C<< $decompress->(\$in, \$out) >>,
true on success, with every tested Cache::Memcached::Fast
(L<Cache::Memcached::RustXS/"Perls, clients and platforms">). The format is gzip, so values stay readable by clients
using Compress::Zlib (stock Fast readers older than 0.28 made as
L</DESCRIPTION> says). The compressor returns false at once for data that is
already compressed, recognised by its magic bytes (JPEG, PNG, GIF, WebP,
AVIF, HEIC, JPEG XL, MP4, MP3, Ogg, FLAC, Matroska, WOFF, gzip, zlib, zstd,
zip, bzip2, xz, 7z, LZ4, Snappy, LZMA, lzip, RAR, compress), so Fast stores
it raw without spending time on it. It also returns false for data of 128
KiB or more when a 16 KiB sample from its middle, deflated at level 1, saves
less than 3 % (encrypted or random bytes, media without a known header):
a sample of at most an eighth of the value, at the fastest level, costs
little beside compressing it all.

B<Fast never calls the compressor without C<compress_threshold>>: it
compresses values of at least C<compress_threshold> bytes, and its default
is -1, so a Fast object given these methods alone reads compressed values
and writes every value raw, with no warning. Give it C<compress_threshold>
too, or both at once with L</fast_options(%options)>:

    use Cache::Memcached::Fast;
    use Cache::Memcached::RustXS::Zlib;
    my $fast = Cache::Memcached::Fast->new({
        servers            => ['127.0.0.1:11211'],
        compress_threshold => 224,
        compress_methods   => Cache::Memcached::RustXS::Zlib::compress_methods(),
    });

Options:

=over 4

=item level => 6

libdeflate level, 0 to 12, or -1 for the default (6). Default: C<$Level>.
Another level croaks.

=item max_output => 64 MiB

The largest value the decompressor will produce; a larger (or corrupt)
value makes Fast treat the key as a miss. Default:
L<$Cache::Memcached::RustXS::MaxDecodedSize|Cache::Memcached::RustXS/$MaxDecodedSize>,
the cap on decoding any stored value, and while it is undef C<$MaxOutput>
(read when the methods are made). Anything but a size in bytes croaks.

=item compress_ratio => 1

The compressor keeps a result of at most this fraction of the value, and
returns false (Fast stores the value raw) for a larger one. Give it Fast's
own C<compress_ratio> (L</fast_options(%options)> does: 0.8 unless told
otherwise) so that the two agree on every value, and
L<Cache::Memcached::RustXS::Zstd/counters()> count what Fast stores. The
default, 1, keeps any result that is not larger than the value. A number
above 0.

=back

The options are fixed when the methods are made. The values the
compressor keeps and declines, and those the decompressor reads, are
counted (L<Cache::Memcached::RustXS::Zstd/counters()>).

=item fast_options(%options)

The options that make a Cache::Memcached::Fast object compress with these
methods, as a list to put inside the hash its C<new> takes:
C<< (compress_threshold => 224, compress_methods => [...]) >>, with
C<compress_ratio> too when it is given here.

    use Cache::Memcached::Fast;
    use Cache::Memcached::RustXS::Zlib;
    my $fast = Cache::Memcached::Fast->new({
        servers   => ['127.0.0.1:11211'],
        namespace => 'user:',
        Cache::Memcached::RustXS::Zlib::fast_options(level => 9),
    });

Give Fast's two settings here rather than next to the list in the hash (a
key written after the list replaces its value, one before it is replaced).
Options: those of L</compress_methods(%options)> (C<level>, C<max_output>),
which makes the methods, and:

=over 4

=item compress_threshold => 224

The size in bytes from which Fast compresses a value; shorter values are
stored raw. A whole number from 1 to 2**31-1 (Fast keeps it in a C
C<int>); anything else croaks, 0 and negative numbers too, since Fast then
compresses nothing.

Why 224: memcached stores an item in the smallest slab chunk that holds
it (L<Cache::Memcached::RustXS::Dict::SlabModel> says what an item takes),
so compressing saves memory only
when it moves the item to a smaller chunk, while it costs time at every
set and get. On the values of F<bench/data/values> cut to N bytes, each
with its own key, under Fast's default C<compress_ratio> (F<bench/threshold.pl>,
its first N bytes and N from the middle): at 128 bytes gzip moves 1 to 15 %
of the items to a smaller chunk, at 160 11 to 27 %, at 224 52 to 62 % (11.6
to 16.6 % of the memory saved), at 320 96 to 98 %. 224 is the smallest size
at which more than half the items get smaller.

=item compress_ratio => 0.8

Fast's: a compressed value is stored only if it is at most this fraction
of the value's size (else the value is stored raw). A number above 0 and at
most 1; left out of the list unless given, so that Fast's default, 0.8,
holds. The compressor is given the same ratio (given here, or 0.8), and
declines what Fast would store raw anyway.

=back

It croaks on an unknown option, and as C<compress_methods> does on theirs.

=item override_compress_zlib()

Replaces C<Compress::Zlib::memGzip>, C<memGunzip>, C<compress> and
C<uncompress> with this module's, for the whole process (loading
Compress::Zlib first if needed). Cache::Memcached's set path (which calls
C<Compress::Zlib::memGzip> by its full name) and Cache::Memcached::Fast's
default compress methods (which look the functions up by name at each call)
then use libdeflate with no other change. Calling it again does nothing.

The override reaches code that is not ours, so there C<memGunzip> behaves as
Compress::Zlib's does, to the letter: it removes the gzip member it read
from the caller's variable (code that loops over concatenated members with
C<while (length $gz) { memGunzip($gz) ... }> ends), and input that does
not gunzip here is handed to Compress::Zlib's own C<memGunzip>, so failures,
C<$gzerrno> and what is left in the variable are exactly its own. (The
module's own C<memGunzip> keeps leaving its input alone.)

=item restore_compress_zlib()

Puts Compress::Zlib's own functions back. Does nothing if they are in place.

=item compress_zlib_overridden()

True while the override is in place.

=back

=head1 VARIABLES

=over 4

=item $Cache::Memcached::RustXS::Zlib::Level

The libdeflate level C<memGzip> uses, 6 by default; 0 to 12, or -1 (or
undef) for the default. Read at every call, so C<local> works. A level out
of range makes C<memGzip> return C<undef>.

=item $Cache::Memcached::RustXS::Zlib::MaxOutput

The most bytes C<memGunzip> and C<uncompress> will produce: 64 MiB by
default (memcached's largest item is 1 GiB with C<-I>, 1 MiB by
default). Output that would be larger fails (C<undef>) after at most this
much memory, so a decompression bomb or a lying size field cannot exhaust
memory. While
L<$Cache::Memcached::RustXS::MaxDecodedSize|Cache::Memcached::RustXS/$MaxDecodedSize>
is undef (the default) it caps what that variable caps too (zstd's
C<decompress>, the C<compress_methods> readers, this module's included,
the GetParser's decoding).

=item $Cache::Memcached::RustXS::Zlib::gzerrno

The same variable as C<$Compress::Zlib::gzerrno>.

=back

=head1 DIFFERENCES FROM Compress::Zlib

=over 4

=item *

The input is left alone. Compress::Zlib's C<memGunzip> empties (consumes)
the caller's variable even when it is not passed by reference; this one
does not. (Under L</override_compress_zlib()>, C<Compress::Zlib::memGunzip>
consumes, as the original does.)

=item *

The output of C<memGzip> and C<compress> is not byte-identical to zlib's
(a different deflate implementation), only compatible: any inflater reads it.
At the default level the gzip output is within 1 % of C<memGzip>'s size on
real data (see L</PERFORMANCE>).

=item *

Output is capped at C<$MaxOutput>; Compress::Zlib has no cap.

=item *

On a corrupt deflate stream C<$gzerrno> is C<Z_DATA_ERROR>; Compress::Zlib
copies C<$IO::Uncompress::Gunzip::GunzipError> there, which is often empty.

=item *

The size in the gzip trailer is compared modulo 2**32, as the gzip format
defines it; Compress::Zlib compares the whole length (a difference only for
outputs of 4 GiB or more, which the cap excludes anyway).

=item *

C<memGzip> never returns C<undef> for lack of memory to set up a deflate
state: the state is made once per thread.

=back

=head1 PERFORMANCE

In the reference run of F<bench/run.pl> (Compress::Zlib in the same
run; F<bench/README.md> has the whole table):

                       JSON 9 KB         300 B             text 300 KB
    memGzip            1.89x (28.1 us)   1.51x (7.44 us)   3.88x (4.09 ms)
    memGunzip          3.46x (4.87 us)   2.56x (2.19 us)   3.55x (291 us)
    compress           1.52x (30.8 us)   1.27x (8.22 us)   3.28x (4.14 ms)
    uncompress         2.61x (5.19 us)   1.64x (2.17 us)   3.19x (313 us)

C<memGzip> of the 9 KB JSON misses twice Compress::Zlib's speed: in a
process whose heap keeps the level-9 deflate state Compress::Zlib builds on
every call warm, that state costs it about 50 us (about 95 us in a fresh
process), and 5.5 us of ours is libdeflate clearing its match-finder tables,
a fixed cost per call.

The engine and the level were chosen by measuring them apart, one at a time
(these figures are from that measurement, not from the benchmark run):
libdeflate with reused state beats both Compress::Zlib and flate2 on every
whole-buffer job here, including the unknown-size C<uncompress> (a retry
loop on libdeflate beat flate2's streaming decoder by 2-3 times even when it
took 4-5 tries). On a 9 KB JSON value and a 300 KB text (perldiag.pod):

    level        JSON size  time     text size   time
    memGzip (9)  1280 B     80 us    94 416 B    19.8 ms
    libdeflate 5 1321 B     28 us    95 336 B     3.2 ms
    libdeflate 6 1289 B     30 us    94 573 B     4.2 ms   (default)
    libdeflate 7 1280 B     34 us    94 218 B     5.5 ms
    libdeflate 9 1280 B     39 us    93 479 B     7.9 ms

Level 6 is the fastest whose output stays within 1 % of C<memGzip>'s; level 5
is 3 % larger on JSON. Levels 10 to 12 compress harder, but cost 20 times as
long (613 us on the JSON) and 8.6 MiB of state per thread. Gunzip takes 4.5 us
and 0.23 ms against 21 us and 1.3 ms for C<memGunzip>.

When the output size is not known up front (C<uncompress>: zlib has no size
field; a gzip stream without its trailer), libdeflate, a whole-buffer
decoder, is run in a growth loop: start at 4 times the input (at least
64 KiB), double on "no space" up to C<$MaxOutput>. Measured against flate2
(zlib-rs) streaming into a growing buffer:

    input (zlib, level 6)   exact size   growth loop (tries)   flate2
    JSON, 1277 B             4.2 us       4.2-4.8 us (1)        8.7-11 us
    text, 94 561 B           227 us       234 us (1)            494-596 us
    JSON x 30, 4567 B        18.9 us      52.6 us (4)           104-114 us
    1 MiB of zeros, 1076 B   106 us       146 us (5)            339-381 us

The loop wins everywhere, so one engine does all of it.

F<bench/README.md> has the full benchmark table, measured with F<bench/run.pl>
against Compress::Zlib in the same run.

=head1 SEE ALSO

L<Compress::Zlib>, whose functions these replace;
L<Cache::Memcached::Fast> and L<Cache::Memcached>, the clients they serve;
L<Cache::Memcached::RustXS::GetParser>, which decodes gzip'd values with the
same engine as Cache::Memcached reads them; L<Cache::Memcached::RustXS::Zstd>,
for zstd with trained dictionaries.

=head1 AUTHOR

The Cache-Memcached-RustXS developers.

=head1 BUGS AND SUPPORT

Please report bugs at
L<https://github.com/cache-memcached-rustxs/Cache-Memcached-RustXS/issues>.

=head1 COPYRIGHT AND LICENSE

Copyright (C) 2026 the Cache-Memcached-RustXS developers.

This library is free software; you can redistribute it and/or modify it
under the same terms as Perl itself.

=cut
