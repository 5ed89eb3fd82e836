package Cache::Memcached::RustXS;

use strict;
use warnings;

# Cargo.toml's release number (0.1.0) in Perl's decimal notation; t/ and
# Makefile.PL check that the two, and the linked engine, agree.
our $VERSION = '0.100';

require XSLoader;
XSLoader::load(__PACKAGE__, $VERSION);    # a stale .so of another version croaks

1;
__END__

=head1 NAME

Cache::Memcached::RustXS - a faster, stricter read path and cheaper compression for Cache::Memcached and Cache::Memcached::Fast

=head1 SYNOPSIS

    # Cache::Memcached: parse get replies (and gunzip values) in Rust
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
C<get_multi> responses strictly, fails fast on bad ones, and gunzips
compressed values in the parser.

=item L<Cache::Memcached::RustXS::Zlib>

C<memGzip>, C<memGunzip>, C<compress> and C<uncompress> compatible with
L<Compress::Zlib>, on libdeflate; C<compress_methods> for
L<Cache::Memcached::Fast>; and an opt-in override of Compress::Zlib's own
functions.

=back

The work is done by a Rust engine (a sans-I/O response parser and a gzip/zlib
codec) linked into the XS module; this module loads it. Its only function:

=over 4

=item engine_version()

The version of the linked engine, which is the distribution's
C<$VERSION>.

=back

=head1 SEE ALSO

The README of the distribution has the benchmark numbers.

=head1 LICENSE

This library is free software; you can redistribute it and/or modify it
under the same terms as Perl itself.

=cut
