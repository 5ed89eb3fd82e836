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
use Time::HiRes ();

our $VERSION = '1.000';

my $PARSER = 'Cache::Memcached::RustXS::GetParser';
my @ZSTD_OPTIONS = qw(level dictionary dictionaries rescan_interval);

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
    $self->{cmrx_zstd} = _zstd_chooser($zstd, $self->{namespace}) if $zstd;
    return $self;
}

# A function of the key as stored (namespace included) that returns the
# function standing in for Compress::Zlib::memGzip while this object sets
# that key: zstd at the level, with the dictionary file; or, with a set,
# what the set says for the key's prefix.
sub _zstd_chooser {
    my ($opt, $namespace) = @_;
    Carp::croak('zstd must be a hash reference of options (level, dictionary, or dictionaries)')
        unless ref $opt eq 'HASH';
    Cache::Memcached::RustXS::_check_options('zstd', $opt, @ZSTD_OPTIONS);
    return _set_chooser($opt, $namespace) if defined $opt->{dictionaries};
    Carp::croak('zstd: rescan_interval goes with dictionaries') if exists $opt->{rescan_interval};
    my $writer = _zstd_writer($opt->{level}, defined $opt->{dictionary}
        ? Cache::Memcached::RustXS::Zstd::load_dictionary($opt->{dictionary}) : 0);
    return sub { $writer };
}

sub _zstd_writer {
    my ($level, $id) = @_;
    return _memgzip_stand_in('zstd', defined $level ? $level : 0, $id);
}

# Cache::Memcached keeps a compressed value only when it saves more than its
# COMPRESS_SAVINGS (20 %, strictly): the compressor keeps at most that much
# less a hair (any whole number of bytes below 80 % of the value, none at 80
# %), so that it declines -- and counts -- exactly what Cache::Memcached
# would store raw.
my $COMPRESS_RATIO = 1 - Cache::Memcached::RustXS::ClientInternals::compress_savings() - 1e-12;

# What stands in for memGzip while this object sets a key: the engine's
# compressor for Fast (the same checks, and counted as Fast's are), which
# hands the value back unchanged when it declines it; Cache::Memcached then
# stores it raw. Fails now, not at the first set, on a level out of range.
sub _memgzip_stand_in {
    my ($format, $level, $id) = @_;
    my ($compress) = @{ Cache::Memcached::RustXS::_compress_methods($format, $level, $id,
                            Cache::Memcached::RustXS::_max_decoded_size(), $COMPRESS_RATIO) };
    return sub {
        my $out;
        return $compress->(\$_[0], \$out) ? $out : $_[0];
    };
}

# The writer of each prefix of the set, and of the fallback; the key's
# writer is the one of the longest prefix it starts with. The whole-cache
# entry (prefix '') writes the keys of other prefixes when the set says it
# stores them in less memory than the fallback. A namespace that no prefix
# of the set goes with is taken with the set's delimiter added (namespace
# 'user' for the prefix 'user:'), or warned about. The choice follows the
# set while the process runs: it is made again when the set is due for a
# rescan or a staged dictionary starts.
sub _set_chooser {
    my ($opt, $namespace) = @_;
    for my $name (qw(level dictionary)) {
        Carp::croak("zstd: $name cannot go with dictionaries (the set says which and at what level)")
            if exists $opt->{$name};
    }
    my $dir = $opt->{dictionaries};
    Cache::Memcached::RustXS::Zstd::load_dictionaries($dir,
        exists $opt->{rescan_interval} ? (rescan_interval => $opt->{rescan_interval}) : ());
    my ($choose, $until) = _set_writers($dir, $namespace, 'warn');
    return sub {
        if (Cache::Memcached::RustXS::Zstd::_now() >= $until) {
            # A set that cannot be read leaves the choice as it was (the
            # rescan has warned).
            my @now = eval { _set_writers($dir, $namespace) };
            ($choose, $until) = @now if @now;
        }
        return $choose->(@_);
    };
}

# (a function of the key that returns its writer, until when it holds),
# from the set in $dir as it is now.
sub _set_writers {
    my ($dir, $namespace, $warn) = @_;
    my ($set, $now, $until) = Cache::Memcached::RustXS::Zstd::_followed_set($dir);
    my %by_prefix = map { my $e = $set->current($_, at => $now); ($_ => _zstd_writer($e->{level}, $e->{id})) }
                    grep { length } $set->prefixes(at => $now);
    my @lengths = sort { $b <=> $a } keys %{ { map { (length($_) => 1) } keys %by_prefix } };
    my $fallback = $set->fallback;
    my $whole = $set->other_keys_entry(at => $now);
    my $other = $whole ? _zstd_writer($whole->{level}, $whole->{id})
              : $fallback->{method} eq 'zstd' ? _zstd_writer($fallback->{level}, 0)
              : _gzip_writer($fallback->{level});
    if (defined $namespace && length $namespace && !grep { index($namespace, $_) == 0 } keys %by_prefix) {
        my $r = $set->resolve_prefix($namespace, at => $now);
        if ($r->{how} eq 'delimiter') {
            $other = _zstd_writer($r->{entry}{level}, $r->{entry}{id});
        } elsif ($warn && !grep({ index($_, $namespace) == 0 } keys %by_prefix)
                 && !Cache::Memcached::RustXS::Zstd::_matches_later($set, $namespace, $now)) {
            Cache::Memcached::RustXS::Zstd::_warn_unmatched('Cache::Memcached::RustXS::Memcached: namespace',
                                                            $namespace, $set, $whole);
        }
    }
    my $choose = sub {
        my ($key) = @_;
        for my $len (@lengths) {
            next if $len > length $key;
            my $writer = $by_prefix{ substr $key, 0, $len };
            return $writer if $writer;
        }
        return $other;
    };
    return ($choose, $until);
}

sub _gzip_writer {
    my ($level) = @_;
    return _memgzip_stand_in('gzip', $level, 0);
}

# Cache::Memcached compresses in _set with Compress::Zlib::memGzip, called
# by its full name. For the duration of this object's own set, add and
# replace (append and prepend never compress), that name gives this
# object's own _set its zstd writer, and anyone else memGzip as it was: code
# that runs during the set (a stat_callback, a signal handler, a Storable
# hook) and sets with another Cache::Memcached object still writes gzip.
# ClientInternals tells this object's _set by the frame's sub name and the
# object among its arguments.
#
# A value that was stored without its writer being asked was under the
# object's compress_threshold: counted as declined for being too small (a
# set that failed, or with compression off, is not).
my %SHARED = Cache::Memcached::RustXS::_constants();
for my $command (qw(set add replace)) {
    my $inherited = Cache::Memcached->can($command);
    no strict 'refs';
    *{$command} = sub {
        my $choose = ref $_[0] && $_[0]->{cmrx_zstd} or goto &$inherited;
        my ($self, $key) = @_;
        $key = ref $key ? $key->[1] : $key;    # [hash, key], as _set takes it
        my $writer = $choose->((defined $self->{namespace} ? $self->{namespace} : '')
                               . (defined $key ? $key : ''));
        my $asked = 0;
        my $stored = Cache::Memcached::RustXS::ClientInternals::with_memgzip_for(
            $self, sub { $asked = 1; goto &$writer }, $inherited, @_);
        Cache::Memcached::RustXS::_note_event($SHARED{EVENT_TOO_SMALL})
            if $stored && !$asked && $self->{compress_enable} && $self->{compress_threshold};
        return $stored;
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

The tested releases
(L<Cache::Memcached::RustXS/"Perls, clients and platforms">) all compress
in C<_set>, called by C<set>, C<add> and C<replace>, through
C<Compress::Zlib::memGzip>. C<new> with the C<zstd> option checks that the
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

=item zstd => { dictionaries => $dir, rescan_interval => 60 }

Write each key as the dictionary set in the folder C<$dir> says (see
L<Cache::Memcached::RustXS::Zstd::DictionarySet>): with the current
dictionary whose prefix is the longest the key starts with, at that
dictionary's level; a key that starts with no prefix of the set gets the
set's whole-cache entry (the dictionary of the prefix C<''>, which
C<cmrx-dict train --all> tunes on every prefix's values) when the set says
it takes less memory than the fallback for such keys (its C<other_keys>
field: see L<Cache::Memcached::RustXS::Zstd::DictionarySet/The whole-cache
entry>), else the set's fallback, as its trainer measured it (zstd without
a dictionary, or gzip, at a level). The key is matched B<as memcached stores it, with this
object's C<namespace> in front>, because that is what C<cmrx-dict> sees and
trains on: a set trained on a server shared by several namespaces has
prefixes such as C<app1:user:>. The set is loaded for the whole process
(L<Cache::Memcached::RustXS::Zstd/load_dictionaries($dir, rescan_interval =E<gt> 60)>,
with C<rescan_interval> if given), and this object follows it while it
runs, without a restart, as
L<Cache::Memcached::RustXS::Zstd/compress_methods(dictionaries =E<gt> $dir, prefix =E<gt> $prefix, rescan_interval =E<gt> 60, max_output =E<gt> 64 MiB)>
does (L<Cache::Memcached::RustXS::Zstd::DictionarySet/What a process loads, and when>). C<level> and C<dictionary> cannot go with
C<dictionaries>; a set that cannot be loaded croaks in C<new>.

A C<namespace> that no prefix of the set goes with (none is the start of
the namespace, none starts with it) is not left to the fallback in
silence: when the namespace with the set's delimiter added is a prefix of
the set (namespace C<user> for the prefix C<user:>), keys of this object
that match no prefix are written with that prefix's dictionary; otherwise
C<new> warns, once per set and namespace in the process, naming the set's
prefixes and what the keys get (the whole-cache entry or the fallback), for
example:

    Cache::Memcached::RustXS::Memcached: namespace 'ns:' matches no dictionary of the set in /etc/app/dictionaries (its prefixes: 'compat:', 'gh:', 'npm:', and '' for the whole cache): its values get the whole-cache dictionary (ID 4, level 19) at app.pl line 12.

=back

Readers of these values need the dictionary loaded: see
L<Cache::Memcached::RustXS::Zstd/ROLLING OUT AND BACK> for the order in
which to deploy readers and writers.

=head1 SEE ALSO

L<Cache::Memcached>, the client this class extends;
L<Cache::Memcached::RustXS::Zstd> for the sets it writes with, and
L<Cache::Memcached::RustXS::GetParser>, the parser it reads with.

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
