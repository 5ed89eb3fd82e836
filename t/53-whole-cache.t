#!/usr/bin/perl
# The whole-cache entry of a dictionary set: cmrx-dict train --all tunes one
# dictionary and level on the samples of every prefix, pooled by each
# prefix's keys, and writes it as the entry of the empty prefix;
# compress_methods(dictionaries => DIR) without prefix writes with it (and
# croaks, saying why, for a set without one); Cache::Memcached::RustXS::Memcached
# uses it for keys whose prefix has no entry when the set says it beats the
# fallback; readers need nothing new. (t/56 has report --dictionaries on it
# and train --all --server, which load no client.)
# And no silent fallback: a prefix or a namespace that matches no entry is
# taken with the set's delimiter added when that entry exists, and warns
# once, naming the set's prefixes, otherwise.
#
# Without memcached the cases on a server skip; without
# Cache::Memcached::Fast or Cache::Memcached theirs skip, saying why.
use strict;
use warnings;

use lib 't/lib', 'dev/lib';
use Test::More;
use File::Spec ();
use File::Temp ();
use Cache::Memcached::RustXS::Zstd qw(compress_methods train_dictionary frame_dictionary_id);
use Cache::Memcached::RustXS::Zstd::DictionarySet;
use Cache::Memcached::RustXS::Dict::SetTrainer qw(whole_cache_samples pool_shares forecast_shares);
use CMRXTest::Clients qw(fast_missing cache_memcached_missing fast_needs_threshold);
use CMRXTest::Memcached;
use CMRXTest::DictSets qw(corpus_halves json_of train_whole_cache_set run_dict write_dump @FIXED_TUNING @AT_ONCE);
use CMRXTest::Peers qw(slurp spew);
use CMRXTest::Raw qw(raw_get);

my $HAVE_JSON = eval { require JSON::PP; 1 };
my $HAVE_ZSTD = !system('sh', '-c', 'zstd --version >/dev/null 2>&1');
my $TMP    = File::Temp::tempdir(CLEANUP => 1);
my $Set    = 'Cache::Memcached::RustXS::Zstd::DictionarySet';
my $GZIP   = "\x1f\x8b";
my ($train, $held) = corpus_halves(qw(gh npm compat method));    # family => [[key, value], ...]

my @WARNINGS;
$SIG{__WARN__} = sub { push @WARNINGS, $_[0] };

# ---- helpers -----------------------------------------------------------------

# The frame compress_methods' compressor makes of $value (undef: declined).
sub compressed {
    my ($methods, $value) = @_;
    my $out;
    return $methods->[0]->(\$value, \$out) ? $out : undef;
}

sub warnings_like {
    my ($code) = @_;
    @WARNINGS = ();
    my @r = $code->();
    my @w = @WARNINGS;
    @WARNINGS = ();
    return (\@w, @r);
}

# ---- pooling: each prefix's share in proportion to its keys ----------------------

{
    my $pairs = sub { my ($p, $n) = @_; [ map { [ sprintf('%s:%04d', $p, $_), "value $p $_" ] } 1 .. $n ] };
    my ($pool, $count) = whole_cache_samples([
        { prefix => 'big',   keys => 1000, pairs => $pairs->('big', 100) },
        { prefix => 'mid',   keys => 100,  pairs => $pairs->('mid', 100) },
        { prefix => 'small', keys => 10,   pairs => $pairs->('small', 10) },
    ]);
    is_deeply $count, { big => 100, mid => 10, small => 1 },
        'pooled by keys: 1000, 100 and 10 keys give 100, 10 and 1 of the samples';
    is scalar @$pool, 111, '... 111 values in all';
    my @mid_at = grep { $pool->[$_][0] =~ /\Amid:/ } 0 .. $#$pool;
    ok $mid_at[0] < 11 && $mid_at[-1] > 100, "... a prefix's values spread over the pool (mid: at @mid_at)";
    my %distinct = map { ($_->[0] => 1) } @$pool;
    is scalar keys %distinct, 111, '... each sample once';

    ($pool, $count) = whole_cache_samples([
        { prefix => 'few',  keys => 100, pairs => $pairs->('few', 5) },    # most of it not fetched
        { prefix => 'many', keys => 100, pairs => $pairs->('many', 100) },
    ]);
    is_deeply $count, { few => 5, many => 50 },
        'a prefix short of samples gives what it has; the pool stays as large as the largest sample';
    ($pool, $count) = whole_cache_samples([ { prefix => 'x', keys => 0, pairs => [] } ]);
    is scalar @$pool, 0, 'nothing sampled, nothing pooled';

    # Many prefixes, each with a full sample: without a bound the pool
    # would be every value of every prefix.
    my @many = map { +{ prefix => "p$_", keys => 1000, pairs => $pairs->("p$_", 100) } } 1 .. 50;
    ($pool, $count) = whole_cache_samples(\@many);
    is scalar @$pool, 5000, 'unbounded, 50 prefixes of 100 values pool all 5000';
    ($pool, $count) = whole_cache_samples(\@many, max => 400);
    is scalar @$pool, 400, 'max => 400: the pool holds 400';
    is_deeply [ sort { $a <=> $b } values %$count ], [ (8) x 50 ], '... 8 from each prefix of equal keys';
    is_deeply pool_shares([ { prefix => 'big', keys => 900, values => 100 }, { prefix => 'small', keys => 100, values => 100 } ],
                          max => 50),
        { big => 45, small => 5 }, 'pool_shares: a bound of 50 shared by keys, 45 and 5';
    is_deeply pool_shares([ map { +{ prefix => $_, keys => 100, values => 100 } } qw(a b c) ], max => 10),
        { a => 4, b => 3, c => 3 }, '... 10 among three equal prefixes: 4, 3 and 3, never more than the bound';
    is_deeply pool_shares([ { prefix => 'a', keys => 10, values => 3 } ], max => 1000), { a => 3 },
        '... a bound above what there is changes nothing';

    my @prefixes = map { +{ prefix => "p$_", keys => 100 * $_, values => 10 } } 1 .. 4;
    is forecast_shares(\@prefixes, 40), undef, 'forecast_shares: 40 values, at most 40: every one';
    is_deeply forecast_shares(\@prefixes, 20), { p1 => 2, p2 => 4, p3 => 6, p4 => 8 },
        '... over 20: 20 shared by keys (100 to 400)';
    is_deeply forecast_shares([ { prefix => 'few', keys => 900, values => 3 }, { prefix => 'many', keys => 100, values => 50 } ], 10),
        { few => 3, many => 1 }, '... by keys, no prefix giving more than it sampled (900 keys, 3 values)';
    is forecast_shares([ { prefix => 'none', keys => 0, values => 0 } ], 1), undef, '... no values: every one (none)';
}

# ---- train --all from files: the whole-cache entry ---------------------------------

# Tests never depend on timings: run_dict runs the set commands (train
# --all, report --dictionaries) without speed limits; they tune with
# @FIXED_TUNING (one size, two levels, two methods): t/54 tests the tuner.
my ($st, $out, $err, $dir, $keys, $SAMPLE) = train_whole_cache_set($TMP, $train, $held);
my %keys_of = %$keys;
{
    is $st, 0, "train --all --sample $SAMPLE from a file: exit 0" or diag $err;
    SKIP: {
        skip 'JSON::PP is needed for --json', 4 unless $HAVE_JSON;
        my $r = json_of($out);
        my $w = $r->{whole_cache} || {};
        is $w->{action}, 'added', 'the whole cache gets an entry';
        is $w->{prefix}, '', '... of the empty prefix';
        # The most keys per sample: npm's; every prefix gets its keys' share
        # of as many values as that.
        my $scale = $SAMPLE / $keys_of{npm};
        is_deeply $w->{shares}, { map { ($_ => int($keys_of{$_} * $scale + 0.5)) } keys %keys_of },
            '... trained on every prefix, each in proportion to its keys (' . join(', ', map { "$_ $w->{shares}{$_}" }
                                                                            sort keys %{ $w->{shares} || {} }) . ')';
        ok $w->{other_keys} && defined $w->{other_keys}{memory} && defined $w->{other_keys}{fallback_memory},
            '... measured against the fallback on the keys without a dictionary';
    }
}
my $set = $Set->read($dir);
my $whole = $set->whole_cache;
ok $whole, 'the set has a whole-cache entry';
is $whole->{prefix}, '', '... prefix empty';
is join(' ', grep { length } $set->prefixes), 'compat: gh: npm:', '... beside the prefixes';
cmp_ok $whole->{id}, '>=', 65536, "... with a random ID of its own ($whole->{id}, 4 bytes in each frame)";
ok !(grep { $_->{id} == $whole->{id} && length $_->{prefix} } $set->entries), "... none of the prefixes' IDs";
like $whole->{other_keys}, qr/\A[01]\z/, "... saying whether other keys get it (other_keys=$whole->{other_keys})";
is $set->delimiter, ':', 'the set records its delimiter';
like slurp(File::Spec->catfile($dir, 'manifest')), qr/^dictionary id=\Q$whole->{id}\E prefix= file=/m,
    'the manifest lists it with an empty prefix';
ok $set->verify, '... and its file is as the manifest says';

# ---- train --all of many prefixes: a bounded pool, the same whatever --jobs -------------

SKIP: {
    skip 'JSON::PP is needed for --json', 6 unless $HAVE_JSON;
    # Eight prefixes of the same values (renamed), 20 keys each: unbounded,
    # --sample 5 would pool 5 of each; the pool holds 4 x --sample = 20.
    my @families = qw(gh npm compat method);
    my @items = map { my $p = $_; map { [ "p$p:$_->[0]", $_->[1] ] } @{ $train->{ $families[ $p % @families ] } }[ 0 .. 19 ] } 1 .. 8;
    my $file = File::Spec->catfile($TMP, 'eight.values');
    write_dump($file, @items);
    my %run;
    for my $jobs (1, 3) {
        my $dir = File::Spec->catfile($TMP, "eight-jobs$jobs");
        my ($st, $out, $err) = run_dict([ 'train', '--all', @AT_ONCE, '--out-dir', $dir, '--sample', 5, '--jobs', $jobs,
                                          @FIXED_TUNING, '--json', $file ]);
        is $st, 0, "train --all --jobs $jobs of 8 prefixes: exit 0" or diag $err;
        $run{$jobs} = json_of($out);
    }
    my $w = $run{1}{whole_cache} || {};
    is $w->{pooled}, 20, 'the whole-cache pool holds 4 x --sample (20) of the 40 sampled values';
    is_deeply [ sort { $a <=> $b } values %{ $w->{shares} || {} } ], [ (2) x 4, (3) x 4 ],
        '... shared by keys among the 8 prefixes (20 keys each: 2 or 3 each)' or diag explain $w->{shares};
    my $decided = sub { my ($r) = @_;
                        [ map { [ $_->{prefix}, $_->{action}, @{ $_->{dictionary} || {} }{qw(level bytes method)} ] }
                          @{ $r->{prefixes} || [] }, $r->{whole_cache} || () ] };
    ok @{ $decided->($run{1}) } == 9, '... 8 prefixes and the whole cache decided';
    is_deeply $decided->($run{3}), $decided->($run{1}), '--jobs 3 decides as --jobs 1 does';
}

# ---- compress_methods without prefix ----------------------------------------------------

my $value = $held->{npm}[20][1];
{
    my ($w, $m) = warnings_like(sub { compress_methods(dictionaries => $dir) });
    is_deeply $w, [], 'compress_methods(dictionaries => DIR) without prefix: no warning';
    my $frame = compressed($m, $value);
    ok defined $frame, '... it compresses';
    is frame_dictionary_id($frame), $whole->{id}, '... with the whole-cache dictionary';
    my $back;
    ok $m->[1]->(\$frame, \$back) && $back eq $value, '... and its decompressor reads it';
    my $gh = compress_methods(dictionaries => $dir, prefix => 'gh:');
    undef $back;
    ok $gh->[1]->(\$frame, \$back) && $back eq $value, "... as does another writer's of the set (gh:'s)";
    is Cache::Memcached::RustXS::Zstd::decompress($frame), $value, '... and decompress()';
    SKIP: {
        skip 'the zstd command is not in PATH', 1 unless $HAVE_ZSTD;
        my $in = spew(File::Spec->catfile($TMP, 'whole.zst'), $frame);
        my $dict = $set->path_of($whole->{id});
        is scalar `zstd -q -d -c -D '$dict' '$in'`, $value, 'zstd -d -D FILE decodes it';
    }
    ($w, $m) = warnings_like(sub { compress_methods(dictionaries => $dir, prefix => '') });
    is frame_dictionary_id(compressed($m, $value)), $whole->{id}, "prefix '': the whole-cache entry too";
    is_deeply $w, [], '... without a warning';
}

# A set without a whole-cache entry: a writer without prefix is refused.
my $old_dir = File::Spec->catfile($TMP, 'old-set');
{
    my $old = $Set->create($old_dir);
    my @s = map { $_->[1] } @{ $train->{gh} };
    $old->add(prefix => 'gh:', dictionary => train_dictionary(\@s, size => 8192), level => 3, id => 60);
    $old->write;
    ok !eval { compress_methods(dictionaries => $old_dir); 1 }, 'a set without a whole-cache entry, no prefix: croaks';
    like $@, qr/\Acompress_methods: the dictionary set in \Q$old_dir\E has no whole-cache entry \(a current or staged dictionary for the prefix ''\), which a writer without prefix uses: give prefix/,
        '... saying so, and what to do';
}

# ---- no silent fallback --------------------------------------------------------------------

{
    my ($w, $m) = warnings_like(sub { compress_methods(dictionaries => $dir, prefix => 'gh') });
    is frame_dictionary_id(compressed($m, $value)), $set->current('gh:')->{id},
        "prefix 'gh' (no delimiter) is taken as the set's 'gh:'";
    is_deeply $w, [], '... without a warning';

    my $gets = $whole->{other_keys} ? "the whole-cache dictionary \\(ID $whole->{id}, level $whole->{level}\\)"
             : 'the fallback \(' . $set->fallback->{method} . ' level ' . $set->fallback->{level} . '\)';
    ($w, $m) = warnings_like(sub { compress_methods(dictionaries => $dir, prefix => 'zz:') });
    is scalar @$w, 1, "prefix 'zz:', which matches no entry: one warning";
    like $w->[0], qr/\Acompress_methods: prefix 'zz:' matches no dictionary of the set in \Q$dir\E \(its prefixes: 'compat:', 'gh:', 'npm:', and '' for the whole cache\): its values get $gets at \S+ line \d+/,
        '... naming the prefix, the set, its prefixes and what the values get, at the caller';
    is frame_dictionary_id(compressed($m, $value)), ($whole->{other_keys} ? $whole->{id} : undef),
        '... which is what they get';
    ($w) = warnings_like(sub { compress_methods(dictionaries => $dir, prefix => 'zz:') for 1 .. 3 });
    is_deeply $w, [], '... once: not again for that prefix';
    ($w) = warnings_like(sub { compress_methods(dictionaries => $dir, prefix => 'yy') });
    like $w->[0], qr/prefix 'yy' matches no dictionary/, '... another prefix warns for itself';

    ($w, $m) = warnings_like(sub { compress_methods(dictionaries => $old_dir, prefix => 'zz:') });
    like $w->[0], qr/prefix 'zz:' matches no dictionary of the set in \Q$old_dir\E \(its prefixes: 'gh:'\): its values get the fallback \(gzip level 9\)/,
        'a set without a whole-cache entry: the warning says the fallback';
    is substr(compressed($m, $value), 0, 2), $GZIP, '... and the fallback (gzip) is written';
    ($w, $m) = warnings_like(sub { compress_methods(dictionaries => $old_dir, prefix => 'gh') });
    is frame_dictionary_id(compressed($m, $value)), 60, "... its 'gh' is taken as 'gh:' (the delimiter inferred)";
    is_deeply $w, [], '... silently';
}

# other_keys=0: keys of prefixes without an entry get the fallback, except
# for a writer whose prefix begins several entries' (it writes their keys).
my $ok0_dir = File::Spec->catfile($TMP, 'other-keys-0');
my $ok1_dir = File::Spec->catfile($TMP, 'other-keys-1');
my %manual;
{
    my @gh  = map { $_->[1] } @{ $train->{gh} };
    my @all = map { $_->[1] } map { @{ $train->{$_} } } qw(gh npm compat);
    for my $case ([ $ok0_dir, 0, 70 ], [ $ok1_dir, 1, 80 ]) {
        my ($d, $other, $id) = @$case;
        my $s = $Set->create($d);
        $s->add(prefix => 'app:gh:', dictionary => train_dictionary(\@gh, size => 8192), level => 3, id => $id);
        $s->add(prefix => '', dictionary => train_dictionary(\@all, size => 16384), level => 3, id => $id + 1,
                other_keys => $other);
        $s->set_delimiter(':');
        $s->write;
        $manual{$other} = $id;
    }
    my $s0 = $Set->read($ok0_dir);
    is $s0->for_key('app:zz:1'), undef, 'other_keys=0: for_key of a key without a prefix entry is the fallback';
    is $s0->for_key('app:gh:1')->{id}, 70, '... and of a key with one, its entry';
    is $Set->read($ok1_dir)->for_key('app:zz:1')->{id}, 81, 'other_keys=1: the whole-cache entry';
    my ($w, $m) = warnings_like(sub { compress_methods(dictionaries => $ok0_dir, prefix => 'app:zz:') });
    is substr(compressed($m, $value), 0, 2), $GZIP, 'other_keys=0, a prefix without an entry: the fallback';
    like $w->[0], qr/its values get the fallback \(gzip level 9\)/, '... and the warning says so';
    ($w, $m) = warnings_like(sub { compress_methods(dictionaries => $ok0_dir, prefix => 'app:') });
    is frame_dictionary_id(compressed($m, $value)), 71,
        "a prefix that begins an entry's ('app:' of 'app:gh:'): the whole-cache entry, even with other_keys=0";
    like $w->[0], qr/prefix 'app:' matches no dictionary .*its values get the whole-cache dictionary \(ID 71/,
        '... with a warning';
}

# ---- on memcached: a single Fast object, Cache::Memcached::RustXS::Memcached -------------

my $server = CMRXTest::Memcached->start_or_skip_rest;
my $ADDR = $server->address;

SKIP: {
    skip fast_missing(), 1 if fast_missing();
    # One Fast object for the whole application, the prefix in each key.
    my $one = Cache::Memcached::Fast->new({ servers => [$ADDR], compress_threshold => 100,
                                            compress_methods => compress_methods(dictionaries => $dir) });
    my @items = map { @{ $held->{$_} } } qw(gh npm compat);
    push @items, map { [ "other:$_", $held->{method}[$_][1] ] } 0 .. 9;
    $one->set(@$_) or die "set $_->[0] failed" for @items;
    my %want = map { ($_->[0] => $_->[1]) } @items;
    my @keys = sort keys %want;
    my ($named, $zstd) = (0, 0);
    for my $k (@keys) {
        my ($flags, $data) = raw_get($ADDR, $k);
        next unless $flags & 2;
        $zstd++;
        $named++ if (frame_dictionary_id($data) || 0) == $whole->{id};
    }
    ok $zstd > @keys / 2, "a single Fast object with the whole-cache entry compresses ($zstd of " . scalar(@keys) . ')';
    is $named, $zstd, '... every compressed value with the whole-cache dictionary';
    is_deeply $one->get_multi(@keys), \%want, '... and reads them back';
    my $other = Cache::Memcached::Fast->new({ servers => [$ADDR],
                                              compress_methods => compress_methods(dictionaries => $dir, prefix => 'gh:') });
    is_deeply $other->get_multi(@keys), \%want, "... as does a Fast object with another writer of the set (gh:'s)";
    my $stock = Cache::Memcached::Fast->new({ servers => [$ADDR], (fast_needs_threshold() ? (compress_threshold => 100) : ()) });
    my $seen = $stock->get_multi(@keys);
    is scalar(keys %$seen), @keys - $zstd, "... a stock Fast sees the compressed ones as misses";
    ok !(grep { $seen->{$_} ne $want{$_} } keys %$seen), '... and the others as they are';
    SKIP: {
        skip cache_memcached_missing(), 1 if cache_memcached_missing();
        require Cache::Memcached;
        require Cache::Memcached::RustXS::GetParser;
        my $cm = Cache::Memcached->new({ servers => [$ADDR], parser_class => 'Cache::Memcached::RustXS::GetParser' });
        is_deeply $cm->get_multi(@keys), \%want, '... and Cache::Memcached with our GetParser reads them';
    }
}

SKIP: {
    skip cache_memcached_missing(), 1 if cache_memcached_missing();
    require Cache::Memcached::RustXS::Memcached;
    my $v = $held->{method}[3][1];
    for my $case ([ $ok1_dir, 1, $manual{1} + 1 ], [ $ok0_dir, 0, undef ]) {
        my ($d, $other, $want) = @$case;
        my $memd = Cache::Memcached::RustXS::Memcached->new({ servers => [$ADDR], compress_threshold => 100,
                                                             zstd => { dictionaries => $d } });
        $memd->set("app:zz:$other", $v) or die 'set failed';
        $memd->set("app:gh:$other", $held->{gh}[0][1]) or die 'set failed';
        my (undef, $data) = raw_get($ADDR, "app:zz:$other");
        if ($want) {
            is frame_dictionary_id($data), $want, '::Memcached, other_keys=1: a key without a prefix entry gets the whole-cache entry';
        } else {
            is substr($data, 0, 2), $GZIP, '::Memcached, other_keys=0: a key without a prefix entry gets the fallback (gzip)';
        }
        (undef, $data) = raw_get($ADDR, "app:gh:$other");
        is frame_dictionary_id($data), $manual{$other}, '... and a key with one, its entry';
        is $memd->get("app:zz:$other"), $v, '... both read back';
    }
    # The trained set, its namespaces.
    my ($w, $memd) = warnings_like(sub {
        Cache::Memcached::RustXS::Memcached->new({ servers => [$ADDR], compress_threshold => 100,
                                                  namespace => 'gh', zstd => { dictionaries => $dir } }) });
    is_deeply $w, [], "::Memcached, namespace 'gh': no warning";
    $memd->set('42', $held->{gh}[1][1]) or die 'set failed';
    my (undef, $data) = raw_get($ADDR, 'gh42');
    is frame_dictionary_id($data), $set->current('gh:')->{id}, "... its keys (gh42) get 'gh:'s dictionary";
    is $memd->get('42'), $held->{gh}[1][1], '... and read back';
    ($w) = warnings_like(sub {
        Cache::Memcached::RustXS::Memcached->new({ servers => [$ADDR], namespace => 'ns:', zstd => { dictionaries => $dir } })
            for 1 .. 2 });
    is scalar @$w, 1, "::Memcached, namespace 'ns:', which no entry goes with: one warning for two objects";
    like $w->[0], qr/\ACache::Memcached::RustXS::Memcached: namespace 'ns:' matches no dictionary of the set in \Q$dir\E \(its prefixes: 'compat:', 'gh:', 'npm:', and '' for the whole cache\): its values get .* at \Q$0\E line \d+/,
        '... naming the namespace, the set and its prefixes, at the caller';
    ($w) = warnings_like(sub {
        Cache::Memcached::RustXS::Memcached->new({ servers => [$ADDR], namespace => 'npm:', zstd => { dictionaries => $dir } });
        Cache::Memcached::RustXS::Memcached->new({ servers => [$ADDR], zstd => { dictionaries => $dir } }) });
    is_deeply $w, [], '... none for a namespace that is a prefix of the set, nor for no namespace';
}

done_testing;
