package Cache::Memcached::RustXS;

use strict;
use warnings;

use Carp ();

# Cargo.toml's release number (0.1.0) in Perl's decimal notation; t/ and
# Makefile.PL check that the two, and the linked engine, agree.
our $VERSION = '0.100';

require XSLoader;
XSLoader::load(__PACKAGE__, $VERSION);    # a stale .so of another version croaks

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

    # Cache::Memcached::Fast: gzip and gunzip with libdeflate
    use Cache::Memcached::Fast;
    use Cache::Memcached::RustXS::Zlib;
    my $fast = Cache::Memcached::Fast->new({
        servers          => ['127.0.0.1:11211'],
        compress_methods => Cache::Memcached::RustXS::Zlib::compress_methods(),
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
L<Cache::Memcached::Fast>; and an opt-in override of Compress::Zlib's own
functions.

=item L<Cache::Memcached::RustXS::Zstd>

zstd with dictionaries trained on your own values (a third of gzip's
memory for small values of one kind): C<compress>, C<decompress>,
dictionary training and loading, and C<compress_methods> for
Cache::Memcached::Fast.

=item L<Cache::Memcached::RustXS::Memcached>

A L<Cache::Memcached> that writes zstd with a trained dictionary and reads
with the GetParser above.

=item L<Cache::Memcached::RustXS::ClientInternals>

Private: the one place that knows the clients' internals (Cache::Memcached's
finalize and compression, Cache::Memcached::Fast's methods), how each is
identified before it is used, and what happens when it is not found.

=back

The command L<cmrx-dict> measures what the values of a live memcached
would take under gzip and zstd, and trains the dictionaries.

The work is done by a Rust engine (a sans-I/O response parser, a gzip/zlib
codec and zstd) linked into the XS module; this module loads it. Its only
function:

=over 4

=item engine_version()

The version of the linked Rust engine, as its Cargo.toml states it
(C<0.1.0>). C<$VERSION> is the same release number as a Perl decimal
version (C<0.100>: MAJOR.MINOR and PATCH as two digits), so that
C<use Cache::Memcached::RustXS 0.1> holds for every 0.1.x.

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

Tested on Linux x86_64 with perl 5.10.1, 5.16.3, 5.26.3, 5.30.3, 5.36,
5.40.1 and a C<-DDEBUGGING> 5.40.1. Other Unix-like systems with Rust should
work but are not tested; Windows is not supported (C<Makefile.PL> says "OS
unsupported").

=head1 SEE ALSO

The README of the distribution has the benchmark numbers.

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
