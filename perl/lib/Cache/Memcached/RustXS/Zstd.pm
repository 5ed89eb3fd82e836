package Cache::Memcached::RustXS::Zstd;

use strict;
use warnings;

use Carp ();
use Exporter 5.57 'import';
use Cache::Memcached::RustXS ();

our $VERSION = '0.100';

our @EXPORT_OK = qw(load_dictionary train_dictionary compress decompress compress_methods
                    frame_dictionary_id);
our %EXPORT_TAGS = (all => \@EXPORT_OK);

# compress and decompress are XSUBs (perl/RustXS.xs), as are the helpers
# _load_dictionary_bytes and _train.

# The message of an exception from the XS, without its " at FILE line N.".
sub _reason {
    my ($err) = @_;
    $err =~ s/ at \S+ line \d+\.?\n\z//;
    return $err;
}

sub load_dictionary {
    my ($path) = @_;
    Carp::croak('load_dictionary: the path of a zstd dictionary file is needed')
        unless defined $path && length $path;
    open my $fh, '<', $path or Carp::croak("load_dictionary: cannot open $path: $!");
    binmode $fh;
    my $bytes = do { local $/; <$fh> };
    Carp::croak("load_dictionary: cannot read $path: $!") unless defined $bytes;
    close $fh;
    my $id = eval { _load_dictionary_bytes($bytes) };
    Carp::croak("load_dictionary: $path: " . _reason($@)) unless defined $id;
    return $id;
}

my $DEFAULT_DICTIONARY_SIZE = 16 * 1024;

sub train_dictionary {
    my ($samples, %opt) = @_;
    Carp::croak('train_dictionary: the samples must be an array reference')
        unless ref $samples eq 'ARRAY';
    Cache::Memcached::RustXS::_check_options('train_dictionary', \%opt, 'size');
    my $size = exists $opt{size} ? $opt{size} : $DEFAULT_DICTIONARY_SIZE;
    Carp::croak('train_dictionary: size must be a number of bytes')
        unless defined $size && $size =~ /\A[0-9]+\z/;
    my $dictionary = eval { _train($samples, $size) };
    Carp::croak(_reason($@)) unless defined $dictionary;
    return $dictionary;
}

my @METHOD_OPTIONS = qw(level dictionary max_output);

sub compress_methods {
    my %opt = @_;
    Cache::Memcached::RustXS::_check_options('compress_methods', \%opt, @METHOD_OPTIONS);
    my $id = defined $opt{dictionary} ? load_dictionary($opt{dictionary}) : 0;
    my $methods = eval {
        Cache::Memcached::RustXS::_compress_methods(
            'zstd', $opt{level}, $id,
            exists $opt{max_output} ? $opt{max_output} : $Cache::Memcached::RustXS::Zlib::MaxOutput,
        );
    };
    Carp::croak(_reason($@)) unless $methods;
    return $methods;
}

1;
__END__

=head1 NAME

Cache::Memcached::RustXS::Zstd - zstd with trained dictionaries for memcached values: a third of gzip's memory

=head1 SYNOPSIS

    use Cache::Memcached::RustXS::Zstd qw(train_dictionary load_dictionary
                                          compress decompress);

    # Once, offline: a dictionary from values of one kind (or cmrx-dict train)
    my @samples = map { qq({"id":$_,"name":"user$_","plan":"free","tags":["a","b"]}) } 1 .. 500;
    my $dict = train_dictionary(\@samples, size => 16384);
    open my $fh, '>', 'users.dict' or die $!;
    binmode $fh;
    print {$fh} $dict;
    close $fh or die $!;

    # At startup of every process that reads or writes such values
    my $id = load_dictionary('users.dict');

    my $frame = compress('{"id":7,"name":"user7","plan":"free","tags":["a","b"]}',
                         level => 3, dictionary => $id);
    my $json  = decompress($frame);    # undef for anything it cannot decode

    # Cache::Memcached::Fast: writes zstd, reads zstd, gzip and zlib
    use Cache::Memcached::Fast;
    my $fast = Cache::Memcached::Fast->new({
        servers            => ['127.0.0.1:11211'],
        compress_threshold => 100,
        compress_methods   => Cache::Memcached::RustXS::Zstd::compress_methods(
            level => 3, dictionary => 'users.dict'),
    });

    # Cache::Memcached: one object that writes zstd, and reads it
    use Cache::Memcached::RustXS::Memcached;
    my $memd = Cache::Memcached::RustXS::Memcached->new({
        servers            => ['127.0.0.1:11211'],
        compress_threshold => 100,
        zstd               => { level => 3, dictionary => 'users.dict' },
    });

=head1 DESCRIPTION

Cache values are mostly small JSON documents and HTML fragments, and gzip
does little for them: each value is compressed alone, with no context
shared with the others. A zstd dictionary trained on values of the same kind
is that shared context: with a 16 KiB dictionary, values of one schema
(JSON records, API responses, templated HTML) take 0.36 to 0.43 of the
memory gzip leaves them, prose 0.67 to 0.71, and compressing and
decompressing them is 1.8 to 5.3 times as fast as our gzip (see
L</PERFORMANCE>).

Values are stored as standard zstd frames, flagged as compressed
(C<F_COMPRESS>, 2) as gzip values are, so the rule "compress only if it
saves enough" of both clients applies as before (Cache::Memcached: 20 %;
Cache::Memcached::Fast: C<compress_ratio>). Each frame names the ID of its
dictionary; a reader finds the dictionary by that ID among the ones loaded
in its process. Any zstd tool reads the frames (C<zstd -d -D DICT>).

=head1 FUNCTIONS

Nothing is exported by default; ask for any of the names below, or C<:all>.

=over 4

=item load_dictionary($path)

Loads a standard zstd dictionary file (as C<zstd --train>, L</train_dictionary(\@samples, size =E<gt> 16384)>
or C<cmrx-dict train> write them) for the whole process: from then on every
reader in the process (L</decompress($frame)>, GetParser, the methods of
L</compress_methods(level =E<gt> 3, dictionary =E<gt> $path, max_output =E<gt> 64 MiB)> and Zlib's) decodes frames that name its ID. Returns the
ID. Loading the same file again does nothing more; a different dictionary
with the same ID croaks, as do a file that cannot be read and one that is
not a zstd dictionary. Dictionaries stay loaded for the life of the process
(about 460 KiB for a 16 KiB dictionary once it has been used at one level).

=item train_dictionary(\@samples, size => 16384)

Trains a standard zstd dictionary of at most C<size> bytes (16 KiB by
default) on the sample values, and returns its bytes (write them to a file
to load them with L</load_dictionary($path)> or use them with C<zstd -D>). Train it
on values of the kind it will compress (the same key prefix, say), a few
hundred of them or more, uncompressed. It croaks when zstd cannot train a
dictionary from the samples (fewer than 5 of them, or too little data).

=item compress($data, level => 3, dictionary => $id)

One zstd frame of C<$data> (a string of bytes: a UTF-8 string is downgraded,
wide characters croak, as in Compress::Zlib), at C<level> (zstd's: 1 to 22,
the fast levels -1 to -7, or 0 for the default, 3), with the loaded
dictionary C<$id> (default: none). The frame states its content size. It
croaks on an unknown option, a level out of range and a dictionary that is
not loaded.

=item decompress($frame)

The data of one zstd frame, with the dictionary its header names; C<undef>
for anything else: not a zstd frame, a corrupt or truncated one, bytes after
it, data over C<$Cache::Memcached::RustXS::Zlib::MaxOutput> (64 MiB by
default: a decompression bomb or a lying size costs at most that much
memory), or a dictionary that is not loaded. A missing dictionary is also
reported, by one warning per dictionary ID in the process.

=item frame_dictionary_id($frame)

The ID of the dictionary the header of the zstd frame C<$frame> (or a
reference to it) names, read by the engine as C<decompress> reads it: 0
for a frame made without a dictionary (or with zstd's C<--no-dictID>),
C<undef> when C<$frame> does not start with a whole zstd frame header (no
magic number, a header cut short or with its reserved bit set, a skippable
frame). Only the header is read: the rest of the frame may be missing or
corrupt.

=item compress_methods(level => 3, dictionary => $path, max_output => 64 MiB)

Returns C<[ $compress, $decompress ]> for Cache::Memcached::Fast's
C<compress_methods> option, as L<Cache::Memcached::RustXS::Zlib> does, but
the compressor writes zstd (with the dictionary in the file C<$path>, which
it loads, when given). The decompressor reads zstd (with any loaded
dictionary), gzip and zlib, told apart by their magic bytes: values written
before the switch to zstd, by other clients or by other languages, read as
before. The compressor declines already-compressed data (JPEG, PNG, gzip,
zstd, ...) and large data that does not compress, so Fast stores it raw.
C<max_output> is the decompressor's cap, by default
C<$Cache::Memcached::RustXS::Zlib::MaxOutput>; a larger value is a miss.

=back

Cache::Memcached writes through L<Cache::Memcached::RustXS::Memcached>, a
subclass whose objects write zstd (without changing what
C<Compress::Zlib::memGzip> does anywhere else in the process) and read with
L<Cache::Memcached::RustXS::GetParser>. That parser decodes zstd values
wherever it is used.

=head1 ROLLING OUT AND BACK

A value written as zstd can only be read by a reader that knows zstd and has
its dictionary. A reader without this distribution (stock Cache::Memcached
or Cache::Memcached::Fast) gets a miss for it, never garbage and never a
die; a reader with it but without the dictionary gets a miss and one
warning per dictionary ID. So readers go first:

=over 4

=item 1. Train

C<cmrx-dict report --server HOST:PORT> shows, per key prefix, what gzip and
zstd would store; C<cmrx-dict train --server HOST:PORT --prefix P --out
P.dict> trains a dictionary on the values of a prefix. Ship the dictionary
file with the application. A new dictionary gets a new ID, so dictionaries
can be added later without touching stored values.

=item 2. Readers

Deploy everywhere: this distribution, C<load_dictionary> of every
dictionary at startup, and as readers GetParser for Cache::Memcached
(C<parser_class>) and C<compress_methods> of either Zlib or this module for
Cache::Memcached::Fast (their decompressors read zstd). Writers still write
gzip: nothing changes yet.

=item 3. Writers

Switch the writers: Cache::Memcached::RustXS::Memcached with C<zstd>, or
this module's C<compress_methods> with the dictionary. Values are rewritten
as zstd as they are set again.

=item Rolling back

Switch writers back to gzip first, and keep the readers (and their
dictionaries) until the zstd values have expired or been rewritten; a
reader that goes back to a stock client before then sees those values as
misses (the application computes them again). Dictionaries are never
removed while values that name them may exist.

=back

=head1 PERFORMANCE

On realistic small values (the benchmark corpus in F<bench/data/values>:
583 real JSON documents and HTML fragments, 100 B to 10 KB), per value, with
a 16 KiB dictionary per kind of value trained with L</train_dictionary(\@samples, size =E<gt> 16384)> on
half of its values and measured on the other half, against gzip in the same
run (see the README for the full table):

                               stored bytes   compress      decompress
                               / our gzip's   vs our gzip   vs our gunzip
    JSON records, API
    responses, templated HTML  0.36 - 0.43    3.9 - 5.3 x   2.4 - 3.6 x
    prose HTML (docs)          0.67 - 0.71    2.3 - 2.7 x   1.8 x
    all, zstd with dictionary  0.54           2.5 x         1.95 x
    all, zstd without          1.04           1.8 x         1.27 x

Compressing with a dictionary is 4.8 to 11.9 times as fast as
Compress::Zlib's C<memGzip>. How much a dictionary saves depends on how
alike the values are: values of one schema shrink most, prose least. The
frames carry no checksum: 4 bytes a value and 5 to 18 % more decompression
time, against catching the corruption of stored literals that a frame's
structure does not reveal (frames that do carry one, as the C<zstd> command
writes them, are checked).

=head1 SEE ALSO

L<Cache::Memcached::RustXS::Memcached>, L<Cache::Memcached::RustXS::GetParser>,
L<Cache::Memcached::RustXS::Zlib>, L<cmrx-dict>, L<Cache::Memcached::Fast>,
the zstd manual (C<zstd --train>, C<zstd -D>).

=head1 AUTHOR

The Cache-Memcached-RustXS developers.

=head1 BUGS AND SUPPORT

Please report bugs at
L<https://github.com/cache-memcached-rustxs/Cache-Memcached-RustXS/issues>.

=head1 COPYRIGHT AND LICENSE

Copyright (C) 2026 the Cache-Memcached-RustXS developers.

This library is free software; you can redistribute it and/or modify it
under the same terms as Perl itself. libzstd, linked into it, is Meta's,
under the BSD licence (see F<THIRD-PARTY.md>).

=cut
