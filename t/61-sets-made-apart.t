#!/usr/bin/perl
# Two dictionary sets made from scratch apart -- cmrx-dict train --all on
# two halves of the same families of bench/data/values, as two hosts or a
# lost folder would make them -- share no dictionary ID, so values written
# with one and read by a process that has only the other are misses, never
# wrong bytes. (When IDs were numbered from 1 in every set, 241 of 527 such
# values came back wrong.) The values are written with set A through
# Cache::Memcached::Fast (Zstd's fast_options: an object per prefix, and
# one for every key), in a child process; another child, which has loaded
# set B only, reads every one of them through Fast with B's methods and
# through Cache::Memcached with our GetParser, and reads values it wrote
# with B itself (so that its misses are not a reader that reads nothing).
# This process loads neither set. Cheap: @FIXED_TUNING, --stage 0.
use strict;
use warnings;

use lib 't/lib', 'dev/lib';
use Test::More;
use File::Temp ();
use Cache::Memcached::RustXS::Zstd ();
use Cache::Memcached::RustXS::Zstd::DictionarySet;
use CMRXTest::Child qw(in_child);
use CMRXTest::Clients qw(fast_missing cache_memcached_missing cache_memcached);
use CMRXTest::DictSets qw(corpus_halves run_dict write_dump @FIXED_TUNING @AT_ONCE);
use CMRXTest::Memcached;
use CMRXTest::Raw qw(raw_get);

my @FAMILIES = qw(gh npm compat);
my $F_COMPRESS = 2;
my $TMP = File::Temp->newdir;
my ($train, $held) = corpus_halves(@FAMILIES);

# ---- two sets made apart ----------------------------------------------------------

my (%dir, %ids);
for my $set ([ A => 0 ], [ B => 1 ]) {
    my ($name, $i) = @$set;
    my $file = write_dump("$TMP/$name.values", map { @{ ($train, $held)[$i]{$_} } } @FAMILIES);
    $dir{$name} = "$TMP/set-$name";
    my ($st, $out, $err) = run_dict([ 'train', '--all', @AT_ONCE, '--out-dir', $dir{$name}, @FIXED_TUNING, $file ]);
    is $st, 0, "set $name: train --all on the " . ($i ? 'odd' : 'even') . " half of @FAMILIES: exit 0" or diag $err;
    my $s = Cache::Memcached::RustXS::Zstd::DictionarySet->read($dir{$name});
    $ids{$name} = { map { ($_->{id} => $_->{prefix}) } $s->entries };
    is scalar(keys %{ $ids{$name} }), 1 + @FAMILIES, "... a dictionary for each prefix and the whole cache";
}
my @shared = grep { exists $ids{B}{$_} } sort keys %{ $ids{A} };
is "@shared", '', 'the two sets share no dictionary ID (A: ' . join(' ', sort keys %{ $ids{A} })
                . '; B: ' . join(' ', sort keys %{ $ids{B} }) . ')';

# ---- written with A, read with B only ------------------------------------------------

if (my $why = fast_missing()) {
  SKIP: { skip "writing with a set needs Cache::Memcached::Fast: $why", 1 }
    done_testing;
    exit 0;
}
my $server = CMRXTest::Memcached->start_or_skip_rest;
my $addr = $server->address;

# Every value of the three families, under its key through the Fast object
# of its prefix, and under "KEY/one" through one Fast object for every key.
my @items = map { my $f = $_; map { [ $_->[0], $_->[1], "$f:" ] } map { @$_ } $train->{$f}, $held->{$f} } @FAMILIES;
my %want = map { ($_->[0] => $_->[1], "$_->[0]/one" => $_->[1]) } @items;

my ($written) = in_child(sub {
    my %by_prefix = map {
        ($_ => Cache::Memcached::Fast->new({ servers => [$addr],
            Cache::Memcached::RustXS::Zstd::fast_options(dictionaries => $dir{A}, prefix => $_) }))
    } map { "$_:" } @FAMILIES;
    my $one = Cache::Memcached::Fast->new({ servers => [$addr],
        Cache::Memcached::RustXS::Zstd::fast_options(dictionaries => $dir{A}) });
    my $n = 0;
    for my $item (@items) {
        my ($key, $value, $prefix) = @$item;
        $n += $by_prefix{$prefix}->set($key, $value) ? 1 : 0;
        $n += $one->set("$key/one", $value) ? 1 : 0;
    }
    return $n;
});
is $written, scalar(keys %want), 'set A wrote every value through Fast (an object per prefix, and one for all keys)';

# What the server holds: frames naming A's dictionaries (read back here
# raw: this process loads no set).
my %named_a;
for my $key (sort keys %want) {
    my ($flags, $data) = raw_get($addr, $key);
    next unless defined $flags && $flags & $F_COMPRESS;
    my $id = Cache::Memcached::RustXS::Zstd::frame_dictionary_id($data);
    $named_a{$key} = $id if $id && exists $ids{A}{$id};
}
cmp_ok scalar(keys %named_a), '>=', 0.9 * keys %want,
    scalar(keys %named_a) . ' of the ' . scalar(keys %want) . " values are frames naming A's dictionaries";

# The reader: loads B (through Fast's methods, and for Cache::Memcached),
# reads every key through both clients, and values it wrote with B.
my ($read) = in_child(sub {
    my $fast = Cache::Memcached::Fast->new({ servers => [$addr],
        Cache::Memcached::RustXS::Zstd::fast_options(dictionaries => $dir{B}) });
    my %ctl = map { ("ctl/$_->[0]" => $_->[1]) } @items[ map { 7 * $_ } 0 .. 9 ];
    $fast->set($_, $ctl{$_}) or die "set $_ with B failed\n" for sort keys %ctl;
    my %got = (fast => $fast->get_multi(keys %want, keys %ctl));
    if (!cache_memcached_missing()) {
        Cache::Memcached::RustXS::Zstd::load_dictionaries($dir{B});
        $got{'Cache::Memcached'} = cache_memcached(servers => [$addr])->get_multi(keys %want, keys %ctl);
    }
    my %count;
    for my $client (sort keys %got) {
        for my $key (keys %want, keys %ctl) {
            my $value = $got{$client}{$key};
            my $kind = $key =~ m{\Actl/} ? 'B' : $named_a{$key} ? 'A' : 'other';
            my $outcome = !defined $value ? 'miss' : $value eq ($want{$key} // $ctl{$key}) ? 'right' : 'wrong';
            $count{$client}{$kind}{$outcome}++;
        }
    }
    return { count => \%count, controls => scalar keys %ctl };
});
$read ||= {};
my %count = %{ $read->{count} || {} };
my $a_values = keys %named_a;
my $others = keys(%want) - $a_values;
for my $client ('fast', 'Cache::Memcached') {
  SKIP: {
        skip "Cache::Memcached: " . cache_memcached_missing(), 3 if $client ne 'fast' && cache_memcached_missing();
        my $c = $count{$client} || {};
        my $name = $client eq 'fast' ? "Cache::Memcached::Fast with B's methods" : 'Cache::Memcached with our GetParser';
        is_deeply $c->{A}, { miss => $a_values }, "$name: every value written with A's dictionaries is a miss ($a_values), none wrong";
        is_deeply $c->{other} || {}, $others ? { right => $others } : {}, "... the $others others (not frames of A) read right";
        is_deeply $c->{B}, { right => $read->{controls} }, "... and the values written with B read right";
    }
}

done_testing;
