#!/usr/bin/perl
# The whole-cache entry of a dictionary set in cmrx-dict's reports: report
# --dictionaries measures it beside a fresh one and counts the stored
# values that name it; train --all --server pools the prefixes' samples as
# memcached holds them (each prefix's share in proportion to its keys).
# These load no client (the values on the server are written as the
# clients write them, gzip under flag 2), so the client matrix's release
# rows leave them out; t/53 has the entry itself and the clients.
#
# Without memcached the case on a server skips.
use strict;
use warnings;

use lib 't/lib', 'dev/lib';
use Test::More;
use File::Spec ();
use File::Temp ();
use Compress::Zlib ();
use Cache::Memcached::RustXS::Zstd qw(compress_methods);
use Cache::Memcached::RustXS::Zstd::DictionarySet;
use CMRXTest::Memcached;
use CMRXTest::DictSets qw(corpus_halves run_dict write_dump json_of named_by train_whole_cache_set @FIXED_TUNING @AT_ONCE);
use CMRXTest::Raw qw(raw_set);

my $HAVE_JSON = eval { require JSON::PP; 1 };
my $TMP  = File::Temp::tempdir(CLEANUP => 1);
my $F_COMPRESS = 2;    # the clients' flag of a compressed value
my ($train, $held) = corpus_halves(qw(gh npm compat));    # family => [[key, value], ...]

# ---- report --dictionaries ----------------------------------------------------------------

# Tests never depend on timings: run_dict runs the set commands (train
# --all, report --dictionaries) without speed limits; they tune with
# @FIXED_TUNING (one size, two levels, two methods): t/54 tests the tuner.
my ($st, $out, $err, $dir) = train_whole_cache_set($TMP, $train, $held);
is $st, 0, 'train --all: the set, with its whole-cache entry' or diag $err;
my $whole = Cache::Memcached::RustXS::Zstd::DictionarySet->read($dir)->whole_cache;
ok $whole, '... which it has' or do { done_testing; exit };
{
    # Today's values: npm's and gh's other half written by a single writer
    # with the whole-cache entry.
    my $m = compress_methods(dictionaries => $dir);
    my @today = map { my ($k, $v) = @$_; my $f; $m->[0]->(\$v, \$f) ? [ $k, $f, $F_COMPRESS ] : [ $k, $v ] }
                @{ $held->{npm} }, @{ $held->{gh} };
    my $named = grep { $_->[2] } @today;
    my $file = write_dump(File::Spec->catfile($TMP, 'today.values'), @today);
    SKIP: {
        skip 'JSON::PP is needed for --json', 4 unless $HAVE_JSON;
        my ($st, $out, $err) = run_dict([ 'report', '--dictionaries', $dir, @FIXED_TUNING, '--json', $file ]);
        is $st, 0, 'report --dictionaries: exit 0' or diag $err;
        my $r = json_of($out);
        my $w = $r->{whole_cache} || {};
        like $w->{verdict} || '', qr/\A(?:current|retrain)\z/, "... reports on the whole-cache entry: $w->{verdict}";
        ok defined $w->{current}{memory} && defined $w->{choice}{memory},
            '... its dictionary and a fresh one measured on the same held-out values';
        is named_by($r)->{ $whole->{id} }, $named, "... and counts the $named stored values that name it";
    }
    my ($st, $out) = run_dict([ 'report', '--dictionaries', $dir, @FIXED_TUNING, $file ]);
    is $st, 0, 'report --dictionaries as text';
    like $out, qr/^\s+'' \(the whole cache\)\s+ID $whole->{id}, level $whole->{level}\b/m, '... has a row for it';
}

# ---- train --all --server: shares as memcached holds them -------------------------------------

SKIP: {
    skip 'JSON::PP is needed for --json', 1 unless $HAVE_JSON;
    my ($srv) = CMRXTest::Memcached->start_optional;
    skip(CMRXTest::Memcached->unavailable, 1) unless $srv;
    my $addr = $srv->address;
    # Stored as the clients store what they compress: gzip, flag 2.
    my $store = sub {
        my ($key, $value) = @_;
        raw_set($addr, $key, $F_COMPRESS, Compress::Zlib::memGzip($value)) or die "set $key failed";
    };
    # gh: values under 3 keys each, compat: under one.
    for my $copy (1 .. 3) { $store->("$_->[0]-$copy", $_->[1]) for @{ $train->{gh} } }
    $store->(@$_) for @{ $train->{compat} };
    my $d = File::Spec->catfile($TMP, 'server-set');
    my ($st, $out, $err) = run_dict([ 'train', '--all', @AT_ONCE, '--server', $addr, '--out-dir', $d, @FIXED_TUNING, '--json' ]);
    is $st, 0, 'train --all --server: exit 0' or diag $err;
    my $w = json_of($out)->{whole_cache} || {};
    is_deeply $w->{shares}, { gh => 3 * @{ $train->{gh} }, compat => scalar @{ $train->{compat} } },
        "... the whole cache pooled as the server holds it (gh: 3 keys a value, compat: 1)";
    is $w->{keys}, 3 * @{ $train->{gh} } + @{ $train->{compat} }, '... over every key';
}

done_testing;
