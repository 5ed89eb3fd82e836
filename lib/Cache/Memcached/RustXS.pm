package Cache::Memcached::RustXS;

use strict;
use warnings;

use Carp ();

# Cargo.toml's release number (1.0.0) in Perl's decimal notation; t/ and
# Makefile.PL check that the two, and the linked engine, agree.
our $VERSION = '1.000';

require XSLoader;
XSLoader::load(__PACKAGE__, $VERSION);    # a stale .so of another version croaks

# The largest value decoding a stored value makes (zstd, GetParser,
# decode_compressed); undef, the default, leaves the cap to
# $Cache::Memcached::RustXS::Zlib::MaxOutput, the one name for it before this
# one. The XS reads both at each call, so `local` works.
our $MaxDecodedSize;

# $MaxDecodedSize as the XS reads it, for the Perl code that hands the cap on.
sub _max_decoded_size {
    return defined $MaxDecodedSize ? $MaxDecodedSize : $Cache::Memcached::RustXS::Zlib::MaxOutput;
}

# The modules' functions that take options check them here; croak then
# speaks of the line that called those functions.
our @CARP_NOT = qw(Cache::Memcached::RustXS::Memcached Cache::Memcached::RustXS::Zlib
                   Cache::Memcached::RustXS::Zstd);

# Croaks "$what: unknown option(s): ..." when %$options has keys not @known.
sub _check_options {
    my ($what, $options, @known) = @_;
    my %known = map { ($_ => 1) } @known;
    my @unknown = grep { !$known{$_} } sort keys %$options;
    Carp::croak("$what: unknown option(s): @unknown") if @unknown;
    return;
}

# The message of an exception without the " at FILE line N." that die and
# croak add, for a message that names its own subject. The one place the
# modules and cmrx-dict take it off.
sub _error_message {
    my ($err) = @_;
    $err =~ s/ at \S+ line [0-9]+\.?\n?\z//;
    return $err;
}

# A string as a message or a report shows it: its bytes (wide characters
# UTF-8 encoded, so a UTF-8 key reads as text), each control byte (C0 and
# DEL) as \xHH, so that a key or a server's reply cannot move the cursor or
# break a line. The one escaper of the distribution's messages and output.
sub _printable {
    my ($bytes) = @_;
    utf8::encode($bytes) if utf8::is_utf8($bytes);
    $bytes =~ s/([\x00-\x1f\x7f])/sprintf '\\x%02X', ord $1/ge;
    return $bytes;
}

# Fast keeps compress_threshold in a C int: a larger one would wrap.
my $FAST_INT_MAX = 2**31 - 1;

# Cache::Memcached::Fast's compress_ratio when it is not given: it stores a
# value compressed only when that takes at most this fraction of it.
my $FAST_DEFAULT_RATIO = 0.8;

# The Cache::Memcached::Fast settings of the modules' fast_options, taken out
# of %$options: (compress_threshold => N, and compress_ratio => R when
# given), N being $threshold unless the options give one; and the ratio Fast
# will apply (R, or its default), which the compressor is given too, so that
# it declines, and counts, what Fast would store raw anyway. Croaks "$what:
# ..." on an option neither those two nor @known, and on a bad value.
sub _fast_settings {
    my ($what, $options, $threshold, @known) = @_;
    _check_options($what, $options, @known, qw(compress_threshold compress_ratio));
    $threshold = delete $options->{compress_threshold} if exists $options->{compress_threshold};
    Carp::croak("$what: compress_threshold must be a whole number of bytes from 1 to $FAST_INT_MAX "
              . '(at 0 or less Fast compresses nothing: a reader needs compress_methods alone)')
        unless defined $threshold && $threshold =~ /\A[0-9]+\z/ && $threshold >= 1 && $threshold <= $FAST_INT_MAX;
    my @settings = (compress_threshold => 0 + $threshold);
    my $ratio = $FAST_DEFAULT_RATIO;
    if (exists $options->{compress_ratio}) {
        $ratio = delete $options->{compress_ratio};
        Carp::croak("$what: compress_ratio must be a number above 0 and at most 1")
            unless defined $ratio && $ratio =~ /\A(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)\z/ && $ratio > 0 && $ratio <= 1;
        push @settings, compress_ratio => 0 + $ratio;
    }
    return (\@settings, 0 + $ratio);
}

1;
__END__

=head1 NAME

Cache::Memcached::RustXS - a faster, stricter read path and cheaper compression for Cache::Memcached and Cache::Memcached::Fast

=head1 SYNOPSIS

    # Cache::Memcached: parse get replies (and decode gzip and zstd values) in Rust
    use Cache::Memcached;
    use Cache::Memcached::RustXS::GetParser;
    my $memd = Cache::Memcached->new({
        servers      => ['127.0.0.1:11211'],
        parser_class => 'Cache::Memcached::RustXS::GetParser',
    });

    # Cache::Memcached::Fast: gzip and gunzip with libdeflate (fast_options
    # gives compress_threshold with compress_methods: without a threshold
    # Fast never compresses)
    use Cache::Memcached::Fast;
    use Cache::Memcached::RustXS::Zlib;
    my $fast = Cache::Memcached::Fast->new({
        servers => ['127.0.0.1:11211'],
        Cache::Memcached::RustXS::Zlib::fast_options(),
    });

    print "engine $Cache::Memcached::RustXS::VERSION\n";

=head1 DESCRIPTION

This distribution speeds up the two memcached clients Perl sites run, without
changing what they store:

=over 4

=item L<Cache::Memcached::RustXS::GetParser>

A drop-in C<parser_class> for L<Cache::Memcached>: parses C<get> and
C<get_multi> responses strictly, fails fast on bad ones, and decodes
compressed values (gzip and zstd) in the parser.

=item L<Cache::Memcached::RustXS::Zlib>

C<memGzip>, C<memGunzip>, C<compress> and C<uncompress> compatible with
L<Compress::Zlib>, on libdeflate; C<compress_methods> for
L<Cache::Memcached::Fast> (and C<fast_options>, which gives it
C<compress_threshold> too: Fast compresses nothing without one); and an
opt-in override of Compress::Zlib's own functions.

=item L<Cache::Memcached::RustXS::Zstd>

zstd with dictionaries trained on your own values (0.36 to 0.43 of the
bytes gzip stores for small values of one kind): C<compress>, C<decompress>,
dictionary training and loading, and C<compress_methods> and
C<fast_options> for Cache::Memcached::Fast.

=item L<Cache::Memcached::RustXS::Zstd::DictionarySet>

A folder of dictionaries, one per key prefix with its level, and its
manifest: what trainers write and every reader and writer loads.

=item L<Cache::Memcached::RustXS::Zstd::DictionarySet::Manifest>

The manifest's format: parsing, checking and writing it, its dates.

=item L<Cache::Memcached::RustXS::Zstd::DictionarySet::State>

A set's state over time: the clock, and the one function that folds the
set's decisions into what writers use at a moment, what is pending and
what writers used before.

=item L<Cache::Memcached::RustXS::Zstd::DictionarySet::IDs>

The IDs a set gives: its identity, the lowest free ID, a random one.

=item L<Cache::Memcached::RustXS::Memcached>

A L<Cache::Memcached> that writes zstd with a trained dictionary and reads
with the GetParser above.

=item L<Cache::Memcached::RustXS::ClientInternals>

Private: the one place that knows the clients' internals (Cache::Memcached's
finalize and compression, Cache::Memcached::Fast's methods), how each is
identified before it is used, and what happens when it is not found.

=back

The command L<cmrx-dict> measures what the values of a live memcached
would take under gzip and zstd, and trains the dictionaries. Its modules:

=over 4

=item L<Cache::Memcached::RustXS::Dict>

What they share, and their exceptions.

=item L<Cache::Memcached::RustXS::Dict::NodeReader>

One read-only connection to a memcached server: a source of values.

=item L<Cache::Memcached::RustXS::Dict::Pool>

The nodes of a memcached pool as one source of values.

=item L<Cache::Memcached::RustXS::Dict::Files>

Values from files: memcached get responses as a source, and plain samples.

=item L<Cache::Memcached::RustXS::Dict::Sample>

Which values it looks at: keys by prefix, sampled evenly, fetched and
decoded.

=item L<Cache::Memcached::RustXS::Dict::Measure>

What values take under gzip, zstd and zstd with a dictionary, and how long.

=item L<Cache::Memcached::RustXS::Dict::SlabModel>

The memory memcached gives an item: header, key, flags and value, rounded
up to its slab class; and how many items a server filled past its memory
keeps.

=item L<Cache::Memcached::RustXS::Dict::SettingsAdvisor>

The items each memcached setting (C<-f>, C<-n>, C<slab_chunk_max>, C<-C>)
would hold for the values the set writes, per node and for the pool, and
the change that holds most, named only where it is safe.

=item L<Cache::Memcached::RustXS::Dict::Report>

What every subcommand's output shares: text tables, JSON, how prefixes,
durations and a pool's nodes are shown.

=item L<Cache::Memcached::RustXS::Dict::Report::Values>

The output of C<report> and C<train>, as text tables or JSON.

=item L<Cache::Memcached::RustXS::Dict::Report::Dictionaries>

The output of C<train --all> and C<report --dictionaries>.

=item L<Cache::Memcached::RustXS::Dict::SetTrainer>

C<train --all> and C<report --dictionaries>: one decision per key prefix
and for the whole cache, carried out on a dictionary set or reported.

=item L<Cache::Memcached::RustXS::Dict::Prune>

C<prune>: the retired dictionaries of a set that no sampled value names,
retired long enough ago, removed.

=item L<Cache::Memcached::RustXS::Dict::Rollout>

C<list>, C<rollback> and C<history>: each dictionary's state (current,
staged, retired, removed) and since when; a prefix taken back to an
earlier dictionary, or what is pending for it cancelled; the decisions
in order and what became of each.

=item L<Cache::Memcached::RustXS::Dict::Report::Set>

The output of C<prune>, C<list>, C<rollback> and C<history>.

=item L<Cache::Memcached::RustXS::Dict::Tune>

The choice of a prefix's dictionary (method, size) and level, ranked by the
memory memcached would give the held-out values.

=item L<Cache::Memcached::RustXS::Dict::Workers>

Each prefix measured and tuned in a child process of its own, C<--jobs>
at once, so that its memory is given back when it is done.

=item L<Cache::Memcached::RustXS::Dict::Progress>

The progress line on standard error: the listing, then the prefixes done
of the total and the time left.

=item L<Cache::Memcached::RustXS::Dict::CLI>

Its command line: options, subcommands, exit statuses.

=back

The work is done by a Rust engine (a sans-I/O response parser, a gzip/zlib
codec and zstd) linked into the XS module; this module loads it. Its
functions:

=over 4

=item engine_version()

The version of the linked Rust engine, as its Cargo.toml states it
(C<1.0.0>). C<$VERSION> is the same release number as a Perl decimal
version (C<1.000>: MAJOR.MINOR and PATCH as two digits), so that
C<use Cache::Memcached::RustXS 1.0> holds for every 1.0.x.

=item decode_compressed($bytes)

What a value stored compressed (flagged C<F_COMPRESS> by its client) holds,
for tools that read what a cache holds, such as L<cmrx-dict>. The format is
told by the value's magic number, as the readers of this distribution tell
it: a zstd frame (C<28 b5 2f fd>), gzip (C<1f 8b>), or zlib (a two-byte
header of compression method 8 whose check bits hold); the value is then
decoded as L<Cache::Memcached::RustXS::Zstd/decompress($frame)>, C<memGunzip> or
C<uncompress> decode it (so within L</$MaxDecodedSize>). C<$bytes> may be a
reference to them. In list context it returns three values:

    my ($value, $format, $missing_dictionary) =
        Cache::Memcached::RustXS::decode_compressed($stored);

C<$value> is the decoded value, or C<undef> when it does not decode;
C<$format> is C<gzip>, C<zlib> or C<zstd>, or C<undef> when the bytes start
with none of their magic numbers; C<$missing_dictionary> is the ID of the
dictionary a zstd frame needs when that dictionary is not loaded (else
C<undef>). Unlike C<decompress>, it never warns: the third value says it.
In scalar context it returns C<$value> alone.

=back

=head1 VARIABLES

=over 4

=item $MaxDecodedSize

The largest value, in bytes, that decoding a stored value may make:
L<Cache::Memcached::RustXS::Zstd/decompress($frame)>, the
C<compress_methods> readers (Zstd's and Zlib's, when made without
C<max_output>), L<Cache::Memcached::RustXS::GetParser>'s
decompressed values and L</decode_compressed($bytes)>. A value that would
decode past it is not decoded (a miss for the clients). Read at each call, so
C<local> works; a negative size croaks.

Undef by default: the cap is then
C<$Cache::Memcached::RustXS::Zlib::MaxOutput> (64 MiB by default), for
programs that set only it. C<$MaxOutput> alone caps C<memGunzip> and C<uncompress>.

=back

=head1 INSTALLATION

The engine is written in Rust, so building this distribution needs Rust
(cargo and rustc 1.70 or newer, from L<https://rustup.rs> or your system's
packages) besides a C compiler and perl 5.10.1 or newer:

    perl Makefile.PL && make && make test && make install

Without cargo and rustc, C<perl Makefile.PL> says so and stops without
writing a Makefile (CPAN clients report this as NA, not FAIL). The
distribution carries the Rust crates it needs (in F<vendor/>), so the build
needs no network. Only the build needs Rust: the installed module is an
ordinary XS module.

=head2 Perls, clients and platforms

This is the one place that says what is supported and tested; the other
documents link here.

=over 4

=item Perls

5.10.1 or newer. On Linux x86_64, the whole test suite passes on 5.36;
on 5.10.1 and 5.40.1, all of it but four measurements on the benchmark
corpus (51 of the 55 files of F<t/>); on 5.16.3, 5.26.3, 5.30.3 and a
C<-DDEBUGGING> 5.40.1, the files that test the engine, the XS layer and
the clients (34 of the 55) pass and every module loads: C<cmrx-dict>'s
tests, pure Perl, run on the oldest and the newest perl only.

=item Clients

Neither is a prerequisite: a host may have Cache::Memcached,
Cache::Memcached::Fast, both or neither (the Zlib and Zstd functions
alone). Tested: Cache::Memcached 1.24 to 1.30; Cache::Memcached::Fast 0.21
and 0.25 to 0.28 (0.22 to 0.24 are not tested; 0.28 needs perl 5.12, so
on 5.10.1 Fast's tests skip).

=item Platforms

Other Unix-like systems with Rust should work but are not tested; Windows
is not supported (C<Makefile.PL> says "OS unsupported").

=back

=head1 SEE ALSO

F<bench/README.md> in the distribution has the benchmark numbers.

=head1 AUTHOR

The Cache-Memcached-RustXS developers.

=head1 BUGS AND SUPPORT

Please report bugs and ask questions at
L<https://github.com/cache-memcached-rustxs/Cache-Memcached-RustXS/issues>.

=head1 COPYRIGHT AND LICENSE

Copyright (C) 2026 the Cache-Memcached-RustXS developers.

This library is free software; you can redistribute it and/or modify it
under the same terms as Perl itself. The Rust crates it is built with, and
the C libraries inside them (libdeflate, libzstd), have their own licences, listed in
the distribution's F<THIRD-PARTY.md>.

=cut
