#!/usr/bin/perl
# cmrx-dict against real memcached servers, and a pool of them: --server
# given once per node samples the nodes as one cache -- every node listed,
# each prefix's sample spread over the nodes in proportion to its keys on
# each, the keys summed, each value fetched from the node that holds it --
# so train --all on a pool of 4 nodes makes the set that one node holding
# every key makes (the same key counts, choices and dictionaries).
# train --all --server reads the server's slab classes and decodes its
# gzipped values; values written with the set are misses for a stock
# client; report --dictionaries and prune count the stored values that
# name each dictionary ID on every node, and train --all decodes them to
# retrain; plain report and train take a
# pool too. (t/47 runs the set commands on files.) The commands tune with
# @FIXED_TUNING (one size, two levels, two methods): what is tested here
# is the pool and the set, not the tuner's search (t/54).
use strict;
use warnings;

use lib 't/lib', 'dev/lib';
use Test::More;
use Compress::Zlib ();
use Digest::MD5 ();
use Digest::SHA ();
use File::Spec ();
use File::Temp ();
use Cache::Memcached::RustXS::Zstd ();
use Cache::Memcached::RustXS::Zstd::DictionarySet;
use Cache::Memcached::RustXS::Dict::Pool;
use Cache::Memcached::RustXS::Dict::Sample qw(list_keys fetch_values);
use CMRXTest::DictSets qw(corpus_halves run_dict json_of by_prefix named_by @NO_LIMITS @FIXED_TUNING @AT_ONCE);
use CMRXTest::Memcached;
use CMRXTest::Raw qw(raw_set);

my $NODES = 4;
my $F_COMPRESS = 2;

# Without the LRU maintainer, which moves fresh items between its LRUs
# while the crawler lists them, and so hides a few from a listing: the
# key counts here are exact.
my @servers = CMRXTest::Memcached->start_or_skip(count => $NODES + 1, args => [ '-o', 'no_lru_maintainer' ]);
plan skip_all => 'JSON::PP is needed for --json' unless eval { require JSON::PP; 1 };
my $whole = pop @servers;    # one node holding every key
my @pool = map { $_->address } @servers;
my @POOL = map { ('--server', $_) } @pool;
my $TMP = File::Temp::tempdir(CLEANUP => 1);
my ($train, $held) = corpus_halves(qw(gh compat));    # family => [[key, value], ...]

# ---- the pool -------------------------------------------------------------------------------

# Each value under 4 keys, gzipped as the clients store them, on the node
# its key hashes to, and all of them on the whole node.
my (%node_of, %original, %keys_on);
for my $family (qw(gh compat)) {
    for my $copy (1 .. 4) {
        for my $item (@{ $train->{$family} }) {
            my $key = "$item->[0]:$copy";
            my $node = unpack('N', Digest::MD5::md5($key)) % $NODES;
            my $gz = Compress::Zlib::memGzip($item->[1]);
            raw_set($pool[$node], $key, $F_COMPRESS, $gz) && raw_set($whole->address, $key, $F_COMPRESS, $gz)
                or die "set $key failed\n";
            $node_of{$key} = $node;
            $original{$key} = $item->[1];
            $keys_on{$family}[$node]++;
        }
    }
}

# Sampled as one cache.
{
    my $source = Cache::Memcached::RustXS::Dict::Pool->connect(\@pool);
    my $listing = list_keys($source, delimiter => ':', per_prefix => 40);
    for my $family (qw(gh compat)) {
        my $g = $listing->{groups}{$family};
        my $keys = 4 * @{ $train->{$family} };
        is $g->{keys}, $keys, "pool: $family: the keys of every node, summed ($keys)";
        is_deeply $g->{keys_by_node}, [ map { $_ || 0 } @{ $keys_on{$family} }[ 0 .. $NODES - 1 ] ],
            "... each node's (@{ $g->{keys_by_node} })";
        my @share = map { 40 * $_ / $keys } @{ $g->{keys_by_node} };
        is_deeply [ grep { abs($g->{sampled_by_node}[$_] - $share[$_]) > 2 } 0 .. $NODES - 1 ], [],
            "... a sample of 40 spread over the nodes by their keys (@{ $g->{sampled_by_node} }, of "
          . join(' ', map { sprintf '%.1f', $_ } @share) . ')';
        is_deeply [ grep { $g->{node_of}{$_} != $node_of{$_} } @{ $g->{sample} } ], [],
            '... each sampled key of the node that holds it';
        my $values = fetch_values($source, $g);
        is_deeply $values, [ map { $original{$_} } @{ $g->{sample} } ],
            '... each value fetched from its node and decoded';
    }
    $source->close;
}

# train --all on the pool, and on the node holding every key: the same set.
my %set;
for my $case ([ pool => @POOL ], [ whole => '--server', $whole->address ]) {
    my ($name, @server) = @$case;
    my $dir = $set{$name} = File::Spec->catfile($TMP, "$name-set");
    my ($st, $out, $err) = run_dict([ 'train', '--all', @AT_ONCE, @server, '--out-dir', $dir, @FIXED_TUNING, '--json' ]);
    is $st, 0, "train --all on the $name: exit 0" or diag $err;
    $set{"$name-json"} = json_of($out);
}
{
    my ($pool, $one) = map { by_prefix($set{"$_-json"}) } qw(pool whole);
    for my $prefix (qw(gh: compat:)) {
        my @what = (qw(keys keys_counted action), map { "choice.$_" } qw(method size level memory cost));
        my $of = sub { my ($p) = @_; [ map { /\Achoice\.(.*)/ ? $p->{choice}{$1} : $p->{$_} } @what ] };
        is_deeply $of->($pool->{$prefix}), $of->($one->{$prefix}),
            "$prefix: from the pool as from one node with every key (@{ $of->($pool->{$prefix}) })";
    }
    is_deeply $set{'pool-json'}{whole_cache}{shares}, $set{'whole-json'}{whole_cache}{shares},
        'the whole cache: pooled by the pool\'s keys as by the one node\'s';
    # Each set draws its own random IDs: the dictionaries compared under one.
    my $content = sub {
        my ($set) = @_;
        return [ map { [ $_->{prefix}, $_->{level}, Digest::SHA::sha256_hex(
                             Cache::Memcached::RustXS::Zstd::dictionary_with_id($set->dictionary_bytes($_->{id}), 1)) ] }
                 $set->entries ];
    };
    my ($p, $w) = map { Cache::Memcached::RustXS::Zstd::DictionarySet->read($set{$_}) } qw(pool whole);
    is_deeply $content->($p), $content->($w), '... the same dictionaries, byte for byte but their IDs';
}
my $dir = $set{pool};
my $s = Cache::Memcached::RustXS::Zstd::DictionarySet->read($dir);
like $set{'pool-json'}{classes_from}, qr/\Astats settings/, "the pool's slab classes, from its nodes' stats";
is join(' ', grep { length } $s->prefixes), 'compat: gh:', '... a dictionary for each prefix (their gzip values decoded)';

# ---- a client writing with the set ---------------------------------------------------------

SKIP: {
    skip 'Cache::Memcached::Fast is not installed', 1 unless eval { require Cache::Memcached::Fast; 1 };
    # Write gh:'s other half with the set, over the pool as the client
    # spreads it, then report.
    my $methods = Cache::Memcached::RustXS::Zstd::compress_methods(dictionaries => $dir, prefix => 'gh:');
    my $zstd = Cache::Memcached::Fast->new({ servers => \@pool, compress_threshold => 100,
                                             compress_methods => $methods });
    $zstd->set(@$_) or die "set $_->[0] failed\n" for @{ $held->{gh} };
    # Values the writer did not compress (it declines data that does not
    # shrink to 0.8) are stored raw: a stock client reads those, and only
    # those.
    my @raw = map { $_->[0] } grep { my ($v, $o) = ($_->[1]); !($methods->[0]->(\$v, \$o) && length $o <= 0.8 * length $v) }
              @{ $held->{gh} };
    my $plain = Cache::Memcached::Fast->new({ servers => \@pool, compress_threshold => 100 });
    my $stock = $plain->get_multi(map { $_->[0] } @{ $held->{gh} });
    is join(' ', sort keys %$stock), join(' ', sort @raw), 'a stock Fast sees the values the set compressed as misses';
    my $zstd_stored = @{ $held->{gh} } - @raw;
    my $gh_id = $s->current('gh:')->{id};

    my ($st, $out, $err) = run_dict([ 'report', '--dictionaries', $dir, @POOL, @FIXED_TUNING, '--json' ]);
    is $st, 0, 'report --dictionaries on the pool: exit 0' or diag $err;
    my $r = json_of($out);
    is named_by($r)->{$gh_id}, $zstd_stored, "... counts the values naming gh:'s ID on every node ($zstd_stored)";
    is join(' ', sort map { $_->{prefix} } @{ $r->{prefixes} }), 'compat: gh:', '... names every prefix';
    my $advice = $r->{memcached_settings} || {};
    is scalar @{ $advice->{nodes} || [] }, scalar(@POOL) / 2, "... forecasts memcached's settings for each node";
    ok $advice->{pool}{current} && $advice->{pool}{best} >= $advice->{pool}{current},
        "... and for the pool, the advice holding at least the current settings' items"
        or diag explain $advice->{pool};

    ($st, $out, $err) = run_dict([ 'prune', '--dictionaries', $dir, @POOL, '--dry-run', '--json' ]);
    is $st, 0, 'prune --dry-run on the pool: exit 0' or diag $err;
    $r = json_of($out);
    is_deeply [ $r->{keys}, named_by($r)->{$gh_id} ], [ 4 * (@{ $train->{gh} } + @{ $train->{compat} }) + @{ $held->{gh} },
                                                       $zstd_stored ],
        '... lists every node\'s keys and counts the values naming gh:\'s ID on all of them';

    # Retrained on what its writers stored: the values the set compressed
    # decode with its own dictionaries, as a stock client's gzip does.
    ($st, $out, $err) = run_dict([ 'train', '--all', @AT_ONCE, @POOL, '--out-dir', $dir, @FIXED_TUNING, '--json' ]);
    is $st, 0, 'train --all again, on the values the set wrote: exit 0' or diag $err;
    my $gh = by_prefix(json_of($out))->{'gh:'} || {};
    my $gh_keys = 4 * @{ $train->{gh} } + @{ $held->{gh} };
    is_deeply [ $gh->{keys}, $gh->{samples} ], [ $gh_keys, $gh_keys ],
        "... gh:'s $gh_keys values sampled, the $zstd_stored the set compressed decoded" or diag explain $gh;
}

# ---- plain report and train ------------------------------------------------------------------

{
    my ($st, $out, $err) = run_dict([ 'report', @POOL, '--prefix', 'compat', @FIXED_TUNING, @NO_LIMITS, '--json' ]);
    is $st, 0, 'report on the pool: exit 0' or diag $err;
    my $r = json_of($out);
    my $compat = $r->{prefixes}[0] || {};
    is_deeply [ $r->{server}, $compat->{keys}, $compat->{keys_by_node} ],
              [ join(', ', @pool), 4 * @{ $train->{compat} }, [ map { $_ || 0 } @{ $keys_on{compat} }[ 0 .. $NODES - 1 ] ] ],
        '... of every node: the keys summed, and each node\'s' or diag explain $r;
    is $compat->{held_out}{zstd_dict}{keys_counted}, 4 * @{ $train->{compat} }, "... the dictionary weighed against them";

    my $file = File::Spec->catfile($TMP, 'compat.dict');
    ($st, $out, $err) = run_dict([ 'train', @POOL, '--prefix', 'compat', @FIXED_TUNING, '--out', $file, @NO_LIMITS ]);
    is $st, 0, 'train --prefix on the pool: exit 0' or diag $err;
    like $out, qr/^cmrx-dict train: prefix 'compat' of \Q@{[ join ', ', @pool ]}\E: ${\ (4 * @{ $train->{compat} }) } keys listed/m,
        "... from every node's keys";
    ok -s $file, '... and writes the dictionary';
}

# ---- errors ------------------------------------------------------------------------------------

{
    my ($st, $out, $err) = run_dict([ 'report', '--server', $pool[0], '--server', $pool[0] ]);
    is $st, 2, 'a node given twice: exit 2';
    like $err, qr/--server \Q$pool[0]\E is given twice/, '... saying so';
}

done_testing;
