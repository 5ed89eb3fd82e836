package Cache::Memcached::RustXS::Memcached;

use strict;
use warnings;

use Carp ();
use Cache::Memcached 1.24 ();
use base 'Cache::Memcached';
use fields qw(cmrx_zstd);

use Cache::Memcached::RustXS::ClientInternals ();
use Cache::Memcached::RustXS::GetParser ();
use Cache::Memcached::RustXS::Zstd ();

our $VERSION = '0.100';

my $PARSER = 'Cache::Memcached::RustXS::GetParser';
my @ZSTD_OPTIONS = qw(level dictionary);

sub new {
    my ($class, $args) = @_;
    my %args = %{ $args || {} };
    my $zstd = delete $args{zstd};
    if ($zstd) {
        my $why = Cache::Memcached::RustXS::ClientInternals::memgzip_redirect_unavailable();
        Carp::croak("$class: cannot write zstd: $why") if $why;
    }
    $args{parser_class} ||= $PARSER;
    my $self = $class->SUPER::new(\%args);
    $self->{cmrx_zstd} = _zstd_writer($zstd) if $zstd;
    return $self;
}

# The function that stands in for Compress::Zlib::memGzip while this
# object sets a value: zstd at the level, with the dictionary file.
sub _zstd_writer {
    my ($opt) = @_;
    Carp::croak('zstd must be a hash reference of options (level, dictionary)')
        unless ref $opt eq 'HASH';
    Cache::Memcached::RustXS::_check_options('zstd', $opt, @ZSTD_OPTIONS);
    my $level = defined $opt->{level} ? $opt->{level} : 0;
    my $id = defined $opt->{dictionary}
           ? Cache::Memcached::RustXS::Zstd::load_dictionary($opt->{dictionary}) : 0;
    # Fails now, not at the first set, on a level out of range.
    Cache::Memcached::RustXS::Zstd::compress('', level => $level, dictionary => $id);
    return sub { Cache::Memcached::RustXS::Zstd::compress($_[0], level => $level, dictionary => $id) };
}

# Cache::Memcached compresses in _set with Compress::Zlib::memGzip, called
# by its full name. For the duration of this object's own set, add and
# replace (append and prepend never compress), that name gives this
# object's own _set its zstd writer, and anyone else memGzip as it was: code
# that runs during the set (a stat_callback, a signal handler, a Storable
# hook) and sets with another Cache::Memcached object still writes gzip.
# ClientInternals tells this object's _set by the frame's sub name and the
# object among its arguments.
for my $command (qw(set add replace)) {
    my $inherited = Cache::Memcached->can($command);
    no strict 'refs';
    *{$command} = sub {
        my $writer = ref $_[0] && $_[0]->{cmrx_zstd} or goto &$inherited;
        return Cache::Memcached::RustXS::ClientInternals::with_memgzip_for($_[0], $writer, $inherited, @_);
    };
}

1;
__END__

=head1 NAME

Cache::Memcached::RustXS::Memcached - a Cache::Memcached that writes zstd with a trained dictionary and reads with the RustXS parser

=head1 SYNOPSIS

    use Cache::Memcached::RustXS::Memcached;

    my $memd = Cache::Memcached::RustXS::Memcached->new({
        servers            => ['127.0.0.1:11211'],
        compress_threshold => 100,
        zstd               => { level => 3, dictionary => 'users.dict' },
    });
    $memd->set('user:7', '{"id":7,"name":"Ann","plan":"free"}' x 5);
    my $json = $memd->get('user:7');

=head1 DESCRIPTION

A subclass of L<Cache::Memcached> with two differences:

=over 4

=item *

Its C<parser_class> defaults to L<Cache::Memcached::RustXS::GetParser>,
which decodes gzip and zstd values.

=item *

With the C<zstd> option, C<set>, C<add> and C<replace> compress values with
zstd (L<Cache::Memcached::RustXS::Zstd>) instead of gzip, under the same
rules: only values of at least C<compress_threshold> bytes, with
C<compress_enable> on, and only when that saves at least 20 %. The value is
flagged compressed (C<F_COMPRESS>) as a gzip value is.

=back

Cache::Memcached compresses by calling C<Compress::Zlib::memGzip> by its
full name. While one of these objects sets a value, and only then, that name
stands for a function (a C<local> of the glob) that gives this object's own
set its zstd writer -- the caller is told by its sub name,
C<Cache::Memcached::_set>, and the object among its arguments, not by a count
of stack frames; everywhere else in the process, and in other
Cache::Memcached objects, C<memGzip> is what it was (Compress::Zlib's, or
its override by L<Cache::Memcached::RustXS::Zlib/override_compress_zlib()>)
-- also for code that runs during the set, such as a C<stat_callback>, a
signal handler or a Storable hook that sets with another object.

=head1 METHODS

All of Cache::Memcached's. These differ:

=over 4

=item new(\%args)

Cache::Memcached's C<new>, with the C<zstd> option (L</OPTIONS>) and
C<parser_class> defaulting to L<Cache::Memcached::RustXS::GetParser>.

=item set($key, $value [, $exptime])

=item add($key, $value [, $exptime])

=item replace($key, $value [, $exptime])

Cache::Memcached's, compressing with zstd instead of gzip when the object
has the C<zstd> option (see L</DESCRIPTION>).

=back

=head1 CACHE::MEMCACHED VERSIONS

Cache::Memcached 1.24 to 1.30 are tested (they all compress in C<_set>,
called by C<set>, C<add> and C<replace>, through
C<Compress::Zlib::memGzip>). C<new> with the C<zstd> option checks that the
loaded Cache::Memcached does so -- whatever its version number -- and croaks
C<"cannot write zstd: ..."> with the reason when it does not, rather than
writing gzip silently. Without C<zstd>, objects work with any
Cache::Memcached from 1.24. See L<Cache::Memcached::RustXS::ClientInternals>.

=head1 OPTIONS

All of Cache::Memcached's, and:

=over 4

=item zstd => { level => 3, dictionary => $path }

Write zstd. C<level>: zstd's, 1 to 22 or -1 to -7, 0 (the default) for 3.
C<dictionary>: a zstd dictionary file, loaded for the whole process
(L<Cache::Memcached::RustXS::Zstd/load_dictionary($path)>); without it,
values are compressed without a dictionary. Unknown options, a bad level
and a file that is not a dictionary croak in C<new>.

=back

Readers of these values need the dictionary loaded: see
L<Cache::Memcached::RustXS::Zstd/ROLLING OUT AND BACK> for the order in
which to deploy readers and writers.

=head1 SEE ALSO

L<Cache::Memcached>, L<Cache::Memcached::RustXS::Zstd>,
L<Cache::Memcached::RustXS::GetParser>.

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
