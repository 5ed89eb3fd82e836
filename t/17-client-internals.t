#!/usr/bin/perl
# Cache::Memcached::RustXS::ClientInternals identifies the internals of the
# Cache::Memcached that is loaded, whatever its version, before they are used:
# Cache::Memcached::RustXS::Memcached writes zstd by the identity of its own
# _set (sub name and object, not stack depth), so a subclass that adds
# frames still writes zstd; and a Cache::Memcached whose _set does not call
# Compress::Zlib::memGzip makes new() with zstd croak instead of writing gzip
# silently. Runs with whichever Cache::Memcached is first in @INC; skips
# without one.
use strict;
use warnings;

use lib 't/lib';
use File::Temp ();
use Test::More;
use CMRXTest::Clients qw(cache_memcached_missing);

plan skip_all => cache_memcached_missing() if cache_memcached_missing();

require Cache::Memcached;
require Cache::Memcached::RustXS::ClientInternals;
require Cache::Memcached::RustXS::Memcached;
require CMRXTest::Memcached;
require CMRXTest::Stored;

my $INTERNALS = 'Cache::Memcached::RustXS::ClientInternals';
my $version   = $Cache::Memcached::VERSION;
my $read      = grep { $_ eq $version }
    do { no warnings 'once'; @Cache::Memcached::RustXS::ClientInternals::CACHE_MEMCACHED_VERSIONS };
note "Cache::Memcached $version from $INC{'Cache/Memcached.pm'}"
    . ($read ? '' : ' (not among the releases read)');

# ---- the flag bits ------------------------------------------------------------

{
    my %shared = Cache::Memcached::RustXS::_constants();
    is_deeply [ @shared{qw(F_STORABLE F_COMPRESS)} ],
        [ Cache::Memcached::F_STORABLE(), Cache::Memcached::F_COMPRESS() ],
        "the flag bits the XS and cmrx-dict read are Cache::Memcached ${version}'s";
}

# ---- identification, without a server --------------------------------------

SKIP: {
    skip "Cache::Memcached $version is not among the releases read", 2 unless $read;
    is $INTERNALS->can('memgzip_redirect_unavailable')->(), '',
        "Cache::Memcached $version: _set's call of memGzip is found";
    ok $INTERNALS->can('finalize_root')->(), '... and its finalize is recognised';
}
ok !$INTERNALS->can('is_known_finalize')->(sub { chop $_[0] }), 'another closure is not the finalize';
ok !$INTERNALS->can('is_load_multi_finalize')->(sub { chop $_[0] }), '... nor one of _load_multi';
SKIP: {
    skip "Cache::Memcached $version is not among the releases read", 1 unless $read;
    require B;
    my (undef, $pad) = B::svref_2object(\&Cache::Memcached::_load_multi)->PADLIST->ARRAY;
    my @subs = map { $_->object_2svref } grep { $_->isa('B::CV') && ${ $_->ROOT } } $pad->ARRAY;
    is scalar(grep { $INTERNALS->can('is_load_multi_finalize')->($_) } @subs), 1,
        "one of _load_multi's anonymous subs is recognised as its finalize (GetParser's inline finalize)";
}

# A copy of the loaded Cache::Memcached's file, changed by $edit, is loaded
# in a child perl that runs $code; what it prints comes back.
sub with_changed_client {
    my ($edit, $code, @args) = @_;
    my $source = do { local (@ARGV, $/) = $INC{'Cache/Memcached.pm'}; <> };
    $edit->() for $source;
    my $dir = File::Temp::tempdir(CLEANUP => 1);
    mkdir "$dir/Cache" or die "mkdir: $!";
    open my $fh, '>', "$dir/Cache/Memcached.pm" or die "write: $!";
    print {$fh} $source;
    close $fh or die "close: $!";
    my @inc = map { "-I$_" } grep { !ref } @INC;
    open my $out, '-|', $^X, "-I$dir", @inc, '-e', $code, @args or die "run: $!";
    my $said = do { local $/; <$out> };
    close $out;
    return $said;
}

SKIP: {
    my $said = with_changed_client(
        sub { s/Compress::Zlib::memGzip\(\$val\)/Compress::Zlib::compress(\$val)/ or $_ = '' },
        q{use Cache::Memcached::RustXS::Memcached;
          print Cache::Memcached::RustXS::ClientInternals::memgzip_redirect_unavailable(), "\n";
          eval { Cache::Memcached::RustXS::Memcached->new({ servers => [], zstd => {} }); 1 } and print "no croak\n";
          print $@;
          print Cache::Memcached::RustXS::Memcached->new({ servers => [] }) ? "plain new works\n" : '';});
    skip "this Cache::Memcached's _set has no memGzip call to change", 3 unless length $said;
    like $said, qr/\ACache::Memcached \S+: its _set does not call Compress::Zlib::memGzip/,
        'a _set that does not call memGzip: the reason says so';
    like $said, qr/\ncannot write zstd|Memcached: cannot write zstd: Cache::Memcached \S+: its _set does not call/,
        '... new with zstd croaks with it';
    like $said, qr/plain new works/, '... new without zstd works';
}

# ---- zstd by identity, on a real server -------------------------------------

my $server = CMRXTest::Memcached->start_or_skip_rest;    # after tests of its own
my $ADDR   = $server->address;
my $VALUE  = join ',', map { qq({"id":$_,"name":"user $_","plan":"free"}) } 1 .. 40;

{
    package CMRXTest::Subclass;    # adds a frame between set and _set's caller
    our @ISA = ('Cache::Memcached::RustXS::Memcached');
    sub set { my $self = shift; return $self->SUPER::set(@_) }
}

my %common = (servers => [$ADDR], compress_threshold => 100);
my $ours  = Cache::Memcached::RustXS::Memcached->new({ %common, zstd => { level => 3 } });
my $sub   = CMRXTest::Subclass->new({ %common, zstd => { level => 3 } });
my $stock = Cache::Memcached->new({ %common });
ok $ours->set('id:ours', $VALUE), 'our object sets';
is CMRXTest::Stored::stored_as($ADDR, 'id:ours'), 'zstd', '... zstd';
ok $sub->set('id:sub', $VALUE), 'a subclass whose set adds a frame sets';
is CMRXTest::Stored::stored_as($ADDR, 'id:sub'), 'zstd', '... zstd all the same';
ok $stock->set('id:stock', $VALUE), 'a stock Cache::Memcached sets';
is CMRXTest::Stored::stored_as($ADDR, 'id:stock'), 'gzip', '... gzip';
is $ours->get('id:sub'), $VALUE, 'our reader reads the zstd value back';

{   # A stock object's set called inside ours (from our stat_callback).
    my $nesting = Cache::Memcached::RustXS::Memcached->new({ %common, zstd => {},
        stat_callback => sub { $stock->set('id:inner', $VALUE) if $_[3] eq 'set' } });
    ok $nesting->set('id:outer', $VALUE), 'our set whose stat_callback sets with a stock object';
    is CMRXTest::Stored::stored_as($ADDR, 'id:outer'), 'zstd', '... ours wrote zstd';
    is CMRXTest::Stored::stored_as($ADDR, 'id:inner'), 'gzip', '... the stock one inside it gzip';
}

SKIP: {   # A client whose set reaches _set through one more frame (an eval
          # block): counting frames would write gzip here.
    my $said = with_changed_client(
        sub { s/^sub set \{\n    _set\("set", \@_\);\n\}/sub set {\n    return eval { _set("set", \@_) };\n}/m or $_ = '' },
        q{use Cache::Memcached::RustXS::Memcached;
          my $m = Cache::Memcached::RustXS::Memcached->new({ servers => [$ARGV[0]], compress_threshold => 100, zstd => {} });
          print $m->set('id:eval', $ARGV[1]) ? 'stored' : 'not stored'},
        $ADDR, $VALUE);
    skip "this Cache::Memcached's set is not the one-line call of _set to change", 2 unless length $said;
    is $said, 'stored', 'a client whose set calls _set inside an eval block: our object sets';
    is CMRXTest::Stored::stored_as($ADDR, 'id:eval'), 'zstd', '... and writes zstd';
}

done_testing;
