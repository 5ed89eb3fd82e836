#!/usr/bin/perl
# Dictionary sets on a real memcached: a set of three key prefixes with a
# zstd fallback (and one with a gzip fallback), written by
# Cache::Memcached::RustXS::Memcached (the dictionary of each key's prefix,
# namespace included) and by Cache::Memcached::Fast with one
# compress_methods per namespace; read back by our readers (GetParser,
# Fast's decompressors of both modules), as misses -- never garbage, never a
# die -- by stock Cache::Memcached and Cache::Memcached::Fast; what is
# stored is a standard zstd frame naming the prefix's dictionary, which
# `zstd -d -D FILE` decodes. And a reader started before a prefix's
# dictionary was added to its set decodes that prefix's values once its
# rescan interval is over (1 s on the sets' clock, which the test moves),
# without a restart.
#
# Without memcached the file skips, and without Cache::Memcached too (every
# value is written by Cache::Memcached::RustXS::Memcached); without
# Cache::Memcached::Fast (perl 5.10.1) the Fast cases skip; without the zstd
# command its case skips. The stock Fast reader is made as its version
# needs (compress_threshold before 0.28: CMRXTest::Clients).
use strict;
use warnings;

use lib 't/lib', 'dev/lib';
use Test::More;
use File::Temp ();
use POSIX ();
use Time::HiRes ();
use Cache::Memcached::RustXS::GetParser ();
use Cache::Memcached::RustXS::Zstd qw(train_dictionary load_dictionaries compress_methods);
use Cache::Memcached::RustXS::Zstd::DictionarySet;
use CMRXDev::Corpus qw(corpus_values);
use CMRXTest::Clients qw(fast_missing cache_memcached_missing fast_needs_threshold default_parser);
use CMRXTest::Memcached;
use CMRXTest::Peers qw(run_filter);
use CMRXTest::Raw qw(raw_get);
use CMRXTest::Stored qw(frame_dictionary stored_as);

plan skip_all => cache_memcached_missing() if cache_memcached_missing();
require Cache::Memcached::RustXS::Memcached;
my $server = CMRXTest::Memcached->start_or_skip;    # before any test

my @WARNINGS;
$SIG{__WARN__} = sub { push @WARNINGS, $_[0] };
my $ADDR = $server->address;
my $FAST = fast_missing() ? 0 : 1;
my $TMP  = File::Temp->newdir;
my $Set  = 'Cache::Memcached::RustXS::Zstd::DictionarySet';
my $THRESHOLD = 100;
my $HAVE_ZSTD = !system('sh', '-c', 'zstd --version >/dev/null 2>&1');

my $corpus = corpus_values('bench/data/values');
my %V = map { my $f = $_; ($f => [ grep { length >= 4 * $THRESHOLD } map { $_->[1] } @{ $corpus->{$f} } ]) }
        qw(api npm gh news compat);

# ---- the set ---------------------------------------------------------------

my $DIR = "$TMP/set";
{
    my $s = $Set->create($DIR);
    $s->add(prefix => 'app:api:', dictionary => train_dictionary($V{api}, size => 8192), level => 9, id => 1);
    $s->add(prefix => 'app:npm:', dictionary => train_dictionary($V{npm}, size => 8192), level => 6, id => 2);
    $s->add(prefix => 'app:gh:',  dictionary => train_dictionary($V{gh}, size => 8192), level => 3, id => 300);
    $s->set_fallback(method => 'zstd', level => 3);
    $s->write;
}
my $GZ_DIR = "$TMP/gzip-set";
{
    my $s = $Set->create($GZ_DIR);
    $s->add(prefix => 'gz:api:', dictionary => Cache::Memcached::RustXS::Zstd::dictionary_with_id(
        Cache::Memcached::RustXS::Zstd::DictionarySet->read($DIR)->dictionary_bytes(1), 70_000), level => 9);
    $s->set_fallback(method => 'gzip', level => 9);
    $s->write;
}

# A reader started now, before news: has a dictionary: it loads the set
# (rescan every second, on the sets' clock, which it moves by hand) and
# waits; told to go, it reads the news: values once before the interval is
# over and once when it is, and reports which it decoded each time.
pipe my $go_r, my $go_w or die "pipe: $!";
pipe my $res_r, my $res_w or die "pipe: $!";
my $reader = fork // die "fork: $!";
if (!$reader) {
    close $go_w;
    close $res_r;
    my @w;
    local $SIG{__WARN__} = sub { push @w, $_[0] };
    my $now = Time::HiRes::time();
    no warnings 'once';
    local $Cache::Memcached::RustXS::Zstd::DictionarySet::State::Clock = sub { $now };
    my $out = eval {
        load_dictionaries($DIR, rescan_interval => 1);
        my $cm = Cache::Memcached->new({ servers => [$ADDR], namespace => 'app:',
                                         parser_class => 'Cache::Memcached::RustXS::GetParser' });
        my $fast = $FAST ? Cache::Memcached::Fast->new({ servers => [$ADDR], namespace => 'app:',
                                                         compress_methods => compress_methods(level => 3) }) : undef;
        my $keys = <$go_r>;    # the keys written with the new dictionary, and their values' lengths
        chomp $keys;
        my %want = map { split /=/ } split / /, $keys;
        # How many of the values each client reads back whole, and how many wrong.
        my $read = sub {
            my @seen;
            for my $client ($cm, $fast || ()) {
                my $got = $client->get_multi(keys %want);
                my $ok  = grep { defined $got->{$_} && length $got->{$_} == $want{$_} } keys %want;
                my $bad = grep { defined $got->{$_} && length $got->{$_} != $want{$_} } keys %want;
                push @seen, "$ok/" . scalar(keys %want) . ($bad ? " ($bad wrong)" : '');
            }
            push @seen, 'no Fast' unless $fast;
            return @seen;
        };
        my @before = $read->();
        $now += 1;    # the rescan is due
        join ',', @before, $read->();
    };
    $out = "died: $@" unless defined $out;
    print {$res_w} "$out\n", scalar(@w), "\n", @w;
    close $res_w;
    POSIX::_exit(0);
}
close $go_r;
close $res_w;

# ---- writers ----------------------------------------------------------------

my $set = load_dictionaries($DIR);
load_dictionaries($GZ_DIR);
my $memd = Cache::Memcached::RustXS::Memcached->new({
    servers => [$ADDR], namespace => 'app:', compress_threshold => $THRESHOLD,
    zstd => { dictionaries => $DIR },
});
my %written;    # key as the reader asks for it (namespace stripped) => value
for my $fam (qw(api npm gh news)) {
    for my $i (0 .. 4) {
        my $key = "$fam:cm$i";
        ok $memd->set($key, $V{$fam}[$i]), "Memcached set $key" or next;
        $written{$key} = $V{$fam}[$i];
    }
}
is stored_as($ADDR, 'app:api:cm0'), 'zstd+1', 'app:api: is stored with its dictionary, ID 1';
is stored_as($ADDR, 'app:npm:cm0'), 'zstd+2', 'app:npm: with ID 2';
is stored_as($ADDR, 'app:gh:cm0'), 'zstd+300', 'app:gh: with ID 300';
is stored_as($ADDR, 'app:news:cm0'), 'zstd', 'a prefix the set does not have: the fallback, zstd without a dictionary';
{
    my (undef, $api_frame) = raw_get($ADDR, 'app:api:cm1');
    is ord(substr $api_frame, 4, 1) & 3, 1, 'a 1-byte dictionary ID in each frame of ID 1';
    my (undef, $gh_frame) = raw_get($ADDR, 'app:gh:cm1');
    is ord(substr $gh_frame, 4, 1) & 3, 2, 'a 2-byte one for ID 300';
}
{
    my $gz = Cache::Memcached::RustXS::Memcached->new({
        servers => [$ADDR], compress_threshold => $THRESHOLD, zstd => { dictionaries => $GZ_DIR } });
    ok $gz->set('gz:api:1', $V{api}[1]) && $gz->set('gz:other:1', $V{npm}[1]), 'a set with a gzip fallback';
    is stored_as($ADDR, 'gz:api:1'), 'zstd+70000', 'its prefix: its dictionary';
    is stored_as($ADDR, 'gz:other:1'), 'gzip', 'any other key: gzip';
    my $cm = Cache::Memcached->new({ servers => [$ADDR], parser_class => (default_parser())[0] });
    is $cm->get('gz:other:1'), $V{npm}[1], 'which stock readers read';
}

SKIP: {
    skip fast_missing(), 12 unless $FAST;
    for my $fam (qw(api npm gh news)) {
        my $fast = Cache::Memcached::Fast->new({
            servers => [$ADDR], namespace => "app:$fam:", compress_threshold => $THRESHOLD,
            compress_methods => compress_methods(dictionaries => $DIR, prefix => "app:$fam:"),
        });
        ok $fast->set("fast$_", $V{$fam}[5 + $_]), "Fast (namespace app:$fam:) set fast$_" for 0 .. 1;
        $written{"$fam:fast$_"} = $V{$fam}[5 + $_] for 0 .. 1;
        is stored_as($ADDR, "app:$fam:fast0"), stored_as($ADDR, "app:$fam:cm0"),
            "Fast writes app:$fam: as Cache::Memcached::RustXS::Memcached does";
    }
}

# ---- readers ---------------------------------------------------------------

my @keys = sort keys %written;
{
    my $cm = Cache::Memcached->new({ servers => [$ADDR], namespace => 'app:',
                                     parser_class => 'Cache::Memcached::RustXS::GetParser' });
    my $got = $cm->get_multi(@keys);
    is_deeply [ grep { !defined $got->{$_} || $got->{$_} ne $written{$_} } @keys ], [],
        'GetParser reads every value back (get_multi)';
    is_deeply [ grep { ($cm->get($_) // '') ne $written{$_} } @keys ], [], 'and with get';
    my $rx = Cache::Memcached::RustXS::Memcached->new({ servers => [$ADDR], namespace => 'app:' });
    $got = $rx->get_multi(@keys);
    is_deeply [ grep { !defined $got->{$_} || $got->{$_} ne $written{$_} } @keys ], [],
        'Cache::Memcached::RustXS::Memcached reads them';
}
SKIP: {
    skip fast_missing(), 2 unless $FAST;
    for my $module (qw(Zstd Zlib)) {
        my $methods = $module eq 'Zstd' ? compress_methods(level => 3)
                    : do { require Cache::Memcached::RustXS::Zlib; Cache::Memcached::RustXS::Zlib::compress_methods() };
        my $fast = Cache::Memcached::Fast->new({ servers => [$ADDR], namespace => 'app:',
                                                 compress_methods => $methods });
        my $got = $fast->get_multi(@keys);
        is_deeply [ grep { !defined $got->{$_} || $got->{$_} ne $written{$_} } @keys ], [],
            "Fast with ${module}'s compress_methods reads every value back";
    }
}

# Stock readers: a miss for every zstd value, never garbage.
my @zstd_keys = grep { stored_as($ADDR, "app:$_") =~ /\Azstd/ } @keys;
cmp_ok scalar @zstd_keys, '==', scalar @keys, 'every value of the set\'s writers is zstd';
{
    my ($class) = default_parser();
    for my $parser ($class, 'Cache::Memcached::GetParser') {
        my $cm = Cache::Memcached->new({ servers => [$ADDR], namespace => 'app:', parser_class => $parser });
        my $got = $cm->get_multi(@zstd_keys);
        is_deeply [ grep { defined $got->{$_} } @zstd_keys ], [], "stock Cache::Memcached ($parser): misses";
        is_deeply [ grep { defined $cm->get($_) } @zstd_keys[0 .. 3] ], [], 'also with get';
    }
}
SKIP: {
    skip fast_missing(), 1 unless $FAST;
    my $fast = Cache::Memcached::Fast->new({ servers => [$ADDR], namespace => 'app:',
        (fast_needs_threshold() ? (compress_threshold => $THRESHOLD) : ()) });
    my $got = $fast->get_multi(@zstd_keys);
    is_deeply [ grep { defined $got->{$_} } @zstd_keys ], [], 'stock Cache::Memcached::Fast: misses';
}

SKIP: {
    skip 'the zstd command is not in PATH', 2 unless $HAVE_ZSTD;
    for my $key (qw(app:gh:cm2 app:api:cm3)) {
        my ($flags, $frame) = raw_get($ADDR, $key);
        my $id = frame_dictionary($frame);
        my ($status, $plain) = run_filter($frame, 'zstd', '-q', '-d', '-c', '-D', $set->path_of($id));
        (my $k = $key) =~ s/\Aapp://;
        ok $status == 0 && $plain eq $written{$k}, "zstd -d -D decodes the stored $key (dictionary $id)";
    }
}

# ---- a dictionary added to the set while the reader runs -------------------

{
    my $s = $Set->read($DIR);
    my $e = $s->add(prefix => 'app:news:', dictionary => train_dictionary($V{news}, size => 8192),
                    level => 9, id => $s->unused_id);
    $s->write;
    is $e->{id}, 3, 'news: gets dictionary 3';
    # A writer made now writes news: with it.
    my $w = Cache::Memcached::RustXS::Memcached->new({
        servers => [$ADDR], namespace => 'app:', compress_threshold => $THRESHOLD,
        zstd => { dictionaries => $DIR },
    });
    my %news;
    for my $i (10 .. 14) {
        next unless defined $V{news}[$i];
        $w->set("news:late$i", $V{news}[$i]) or next;
        $news{"news:late$i"} = length $V{news}[$i];
    }
    is stored_as($ADDR, 'app:news:late10'), 'zstd+3', 'a writer made after the dictionary was added uses it';
    is stored_as($ADDR, 'app:news:cm0'), 'zstd', 'values written before stay as they were';
    print {$go_w} join(' ', map { "$_=$news{$_}" } sort keys %news), "\n";
    close $go_w;
    my $result = <$res_r>;
    my $warned = <$res_r>;
    my @child_warnings = <$res_r>;
    waitpid $reader, 0;
    chomp($result, $warned);
    my ($cm_before, $fast_before, $cm_after, $fast_after) = split /,/, $result;
    my $all = keys %news;
    is $cm_before, "0/$all", 'the reader started before misses them with GetParser until its rescan is due'
        or diag $result;
    is $cm_after, "$all/$all", '... then decodes them all, at the rescan interval';
  SKIP: {
        skip fast_missing(), 2 unless $FAST;
        is $fast_before, "0/$all", '... and so does Fast: misses before';
        is $fast_after, "$all/$all", '... decodes them all at the interval';
    }
    is $warned, 0, 'without a warning' or diag @child_warnings;
}

# Fast's writer for app:news:, made before the prefix had a dictionary,
# says so once (t/53 tests the warning).
my $unmatched = qr/\Acompress_methods: prefix 'app:news:' matches no dictionary of the set/;
is scalar(grep { /$unmatched/ } @WARNINGS), ($FAST ? 1 : 0), "one warning that app:news: had no dictionary";
is_deeply [ grep { !/$unmatched/ } @WARNINGS ], [], 'no other warning in this process';

done_testing;
