#!/usr/bin/perl
# Cache::Memcached::RustXS::Zstd::counters after a known workload on a real
# memcached equal what was done, to the value: values written and read per
# dictionary ID (and without one, and as gzip) with their bytes before and
# after, as memcached holds them; misses because a frame names a dictionary
# that is not loaded and because a frame does not decode; values the
# compressor declined (compressed already, incompressible) and values
# Cache::Memcached::RustXS::Memcached left under its threshold. Writers:
# Cache::Memcached::Fast with fast_options and Cache::Memcached::RustXS::Memcached,
# each with a dictionary set; readers: Fast's decompressor and GetParser.
# The warning about a missing dictionary comes again once
# $Cache::Memcached::RustXS::Zstd::WarnInterval has passed.
#
# Skips without memcached or without both clients.
use strict;
use warnings;

use lib 't/lib', 'dev/lib';
use Test::More;
use File::Temp ();
use Compress::Zlib ();
use Cache::Memcached::RustXS::Zstd qw(train_dictionary counters compress frame_dictionary_id);
use Cache::Memcached::RustXS::Zstd::DictionarySet;
use CMRXDev::Corpus qw(corpus_values);
use CMRXTest::Clients qw(fast_missing cache_memcached_missing);
use CMRXTest::Memcached;
use CMRXTest::Raw qw(raw_set raw_get);

plan skip_all => $_ for grep { $_ } fast_missing(), cache_memcached_missing();
my $server = CMRXTest::Memcached->start_or_skip;
my $ADDR = $server->address;
my $F_COMPRESS = 2;
require Cache::Memcached::Fast;
require Cache::Memcached;
require Cache::Memcached::RustXS::Memcached;
require Cache::Memcached::RustXS::GetParser;
require Cache::Memcached::RustXS::Zlib;

my @warnings;
$SIG{__WARN__} = sub { push @warnings, $_[0] };

my $corpus = corpus_values('bench/data/values');
my @gh  = map { $_->[1] } @{ $corpus->{gh} };
my @npm = map { $_->[1] } @{ $corpus->{npm} };
my $TMP = File::Temp->newdir;
my $set = Cache::Memcached::RustXS::Zstd::DictionarySet->create("$TMP/set");
my $gh_id  = $set->add(prefix => 'gh:',  dictionary => train_dictionary([ @gh[0 .. 29] ], size => 4096),
                       level => 3, id => $set->new_id)->{id};
my $npm_id = $set->add(prefix => 'npm:', dictionary => train_dictionary([ @npm[0 .. 29] ], size => 4096),
                       level => 3, id => $set->new_id)->{id};
$set->write;

my $fast = Cache::Memcached::Fast->new({
    servers => [$ADDR],
    Cache::Memcached::RustXS::Zstd::fast_options(dictionaries => "$TMP/set", prefix => 'gh:'),
});
my $memd = Cache::Memcached::RustXS::Memcached->new({
    servers => [$ADDR], compress_threshold => 100, zstd => { dictionaries => "$TMP/set" },
});
my $reader = Cache::Memcached->new({ servers => [$ADDR], parser_class => 'Cache::Memcached::RustXS::GetParser' });

# The counters' change over $code.
sub delta {
    my ($code) = @_;
    my $before = counters();
    $code->();
    return _minus(counters(), $before);
}
sub _minus {
    my ($after, $before) = @_;
    return ref $after ? { map { ($_ => _minus($after->{$_}, $before->{$_})) } keys %$after } : $after - ($before || 0);
}
# What a delta says about each counter that changed: "path=N" strings.
sub changed {
    my ($d, $path) = @_;
    return ref $d ? map { changed($d->{$_}, defined $path ? "$path.$_" : $_) } sort keys %$d
                  : $d ? ("$path=$d") : ();
}
# The stored length of each key, as memcached holds it.
sub stored_bytes { my $n = 0; $n += length((raw_get($ADDR, $_))[1]) for @_; return $n }
sub raw_bytes    { my $n = 0; $n += length for @_; return $n }

my @gh_keys  = map { "gh:$_" } 0 .. 19;
my @npm_keys = map { "npm:$_" } 0 .. 19;
my %value = ((map { ("gh:$_" => $gh[ 40 + $_ ]) } 0 .. 19), (map { ("npm:$_" => $npm[ 40 + $_ ]) } 0 .. 19));
my $random = join '', map { chr int rand 256 } 1 .. 300;
my $gzipped = Compress::Zlib::memGzip($gh[0]);

# ---- writes ------------------------------------------------------------------

my $d = delta(sub {
    $fast->set($_ => $value{$_}) for @gh_keys;
    $fast->set('gh:gzipped' => $gzipped);          # compressed already
    $fast->set('gh:random' => $random);            # does not shrink
    $fast->set('gh:tiny' => 'x' x 10);             # under Fast's threshold: never shown to the compressor
});
is_deeply [ changed($d) ], [
    "declined.already_compressed=1", "declined.incompressible=1",
    "dictionaries.$gh_id.written.raw_bytes=" . raw_bytes(@value{@gh_keys}),
    "dictionaries.$gh_id.written.stored_bytes=" . stored_bytes(@gh_keys),
    "dictionaries.$gh_id.written.values=20",
], 'Fast with the set: 20 values written with the dictionary of gh:, their bytes before and after, and two declined';
is((raw_get($ADDR, 'gh:gzipped'))[0] & $F_COMPRESS, 0, '... what it declined is stored raw');

$d = delta(sub {
    $memd->set($_ => $value{$_}) for @npm_keys;
    $memd->set('npm:small' => 'y' x 50);           # under the threshold
    $memd->set('npm:random' => $random);           # does not save 20 %
});
is_deeply [ changed($d) ], [
    "declined.incompressible=1", "declined.too_small=1",
    "dictionaries.$npm_id.written.raw_bytes=" . raw_bytes(@value{@npm_keys}),
    "dictionaries.$npm_id.written.stored_bytes=" . stored_bytes(@npm_keys),
    "dictionaries.$npm_id.written.values=20",
], 'Cache::Memcached::RustXS::Memcached with the set: 20 written with the dictionary of npm:, one too small, one incompressible';
is((raw_get($ADDR, 'npm:random'))[0] & $F_COMPRESS, 0, '... stored raw');

# ---- reads -------------------------------------------------------------------

my @keys = (@gh_keys, @npm_keys, 'gh:gzipped', 'npm:small');
my $read = sub {
    my ($got) = @_;
    return [ grep { !defined $got->{$_} || $got->{$_} ne ($value{$_} // $got->{$_}) } @gh_keys, @npm_keys ];
};
my %expected_reads = (
    "dictionaries.$gh_id.read.raw_bytes"     => raw_bytes(@value{@gh_keys}),
    "dictionaries.$gh_id.read.stored_bytes"  => stored_bytes(@gh_keys),
    "dictionaries.$gh_id.read.values"        => 20,
    "dictionaries.$npm_id.read.raw_bytes"    => raw_bytes(@value{@npm_keys}),
    "dictionaries.$npm_id.read.stored_bytes" => stored_bytes(@npm_keys),
    "dictionaries.$npm_id.read.values"       => 20,
);
my @expected_reads = map { "$_=$expected_reads{$_}" } sort keys %expected_reads;
for my $client ([ 'Fast', $fast ], [ 'Cache::Memcached with GetParser', $reader ]) {
    my $wrong;
    $d = delta(sub { $wrong = $read->($client->[1]->get_multi(@keys)) });
    is_deeply $wrong, [], "$client->[0] reads every value right";
    is_deeply [ changed($d) ], \@expected_reads, '... 20 per dictionary, with their bytes as stored and decoded';
}

# ---- misses --------------------------------------------------------------------

my $unknown = 4_000_000_123;
# A frame naming a dictionary this process never loaded: gh:0's, its
# dictionary ID rewritten in the header (after the magic, the header
# descriptor and, without the single-segment bit, the window byte).
my $frame = (raw_get($ADDR, 'gh:0'))[1];
my $id_at = 5 + ((ord(substr $frame, 4, 1) & 0x20) ? 0 : 1);
substr($frame, $id_at, 4) = pack 'V', $unknown;
raw_set($ADDR, 'gh:unknown', $F_COMPRESS, $frame);
raw_set($ADDR, 'gh:corrupt', $F_COMPRESS, substr(Compress::Zlib::memGzip($gh[1]), 0, 40));
is frame_dictionary_id((raw_get($ADDR, 'gh:unknown'))[1]), $unknown, 'a stored frame names a dictionary not loaded here';
# Rescanned at every such value: the reader looks for the dictionary before
# it reports it missing.
Cache::Memcached::RustXS::Zstd::load_dictionaries("$TMP/set", rescan_interval => 0);
@warnings = ();
for my $client ([ 'Fast', $fast ], [ 'GetParser', $reader ]) {
    my $got;
    $d = delta(sub { $got = $client->[1]->get_multi('gh:unknown', 'gh:corrupt') });
    ok !defined $got->{'gh:unknown'}, "$client->[0]: the value naming an unknown dictionary is a miss";
    ok !defined $got->{'gh:corrupt'}, '... and so is the one that does not decode';
    is_deeply [ changed($d) ], [ 'misses.undecodable=1', 'misses.unknown_dictionary=1' ], '... each counted';
}
is scalar(grep { /zstd dictionary $unknown is not loaded/ } @warnings), 1,
    'the missing dictionary is warned about once within the interval';
{
    local $Cache::Memcached::RustXS::Zstd::WarnInterval = 0;
    @warnings = ();
    $fast->get('gh:unknown') for 1 .. 2;
    is scalar(grep { /zstd dictionary $unknown is not loaded/ } @warnings), 2, '... again once it has passed';
}
is $Cache::Memcached::RustXS::Zstd::WarnInterval, 60, 'WarnInterval is 60 seconds by default';

# ---- gzip ------------------------------------------------------------------------

my $gzip_fast = Cache::Memcached::Fast->new({ servers => [$ADDR], Cache::Memcached::RustXS::Zlib::fast_options() });
$d = delta(sub { $gzip_fast->set('gz:1' => $gh[2]); $gzip_fast->get('gz:1') });
my $gz_stored = stored_bytes('gz:1');
is_deeply [ changed($d) ], [ "gzip.read.raw_bytes=" . length($gh[2]), "gzip.read.stored_bytes=$gz_stored", 'gzip.read.values=1',
                             "gzip.written.raw_bytes=" . length($gh[2]), "gzip.written.stored_bytes=$gz_stored",
                             'gzip.written.values=1' ], 'gzip through Zlib\'s methods: written and read, with bytes';

# ---- the shape ---------------------------------------------------------------------

my $c = counters();
is_deeply [ sort keys %$c ], [qw(declined dictionaries gzip misses sets zlib zstd)], 'counters: its keys';
is_deeply [ sort keys %{ $c->{dictionaries} } ], [ sort $gh_id, $npm_id ], '... every loaded dictionary';
ok !eval { counters(1); 1 }, 'counters takes no arguments';

done_testing;
