#!/usr/bin/perl
# cmrx-dict train --all --out-dir DIR and report --dictionaries DIR: from
# files of get responses, from standard input and from a real memcached.
# Every prefix worth a dictionary gets one with a small ID, at the level
# chosen, in a set that load_dictionaries and the zstd command read; a rerun
# keeps a dictionary unless the new one takes --if-better less memory,
# replaces it otherwise without removing the old file, and adds new
# prefixes; report names every prefix, says "retrain" when it should, and
# counts the sampled values naming each dictionary ID; bad input fails
# cleanly with the documented statuses. The commands tune with
# @FIXED_TUNING (one size, two levels, two methods): what is tested here is
# the set and its reports; t/54 tests the tuner's search (its sizes too).
use strict;
use warnings;

use lib 't/lib', 'dev/lib';
use Test::More;
use File::Spec ();
use File::Temp ();
use Compress::Zlib ();
use Cache::Memcached::RustXS::Zstd ();
use Cache::Memcached::RustXS::Zstd::DictionarySet;
use CMRXTest::DictSets qw(corpus_halves run_dict dump_of write_dump json_of by_prefix named_by @FIXED_TUNING @AT_ONCE);
use CMRXTest::Peers qw(spew);
use CMRXTest::Memcached;

my $HAVE_JSON = eval { require JSON::PP; 1 };
my $HAVE_ZSTD = !system('sh', '-c', 'zstd --version >/dev/null 2>&1');
my $TMP = File::Temp::tempdir(CLEANUP => 1);
my ($train, $held) = corpus_halves(qw(gh npm compat method));    # family => [[key, value], ...]

# ---- helpers -----------------------------------------------------------------

# A get-response file of these items, named $name in $TMP.
sub dump_file { my ($name, @items) = @_; write_dump(File::Spec->catfile($TMP, $name), @items) }

# ---- train --all from files ------------------------------------------------------

my @few = map { [ "tiny:$_", qq({"id":$_,"x":"y"}) ] } 1 .. 3;             # too few for a dictionary
my @bare = map { [ "bare$_", $train->{npm}[$_][1] ] } 0 .. 9;               # no delimiter: the fallback
my $train_file = dump_file('train.values', map({ @{ $train->{$_} } } qw(gh npm compat)), @few, @bare);
my $set_dir = File::Spec->catfile($TMP, 'set');

SKIP: {
    skip 'JSON::PP is needed for --json', 1 unless $HAVE_JSON;
    my ($st, $out, $err) = run_dict([ 'train', '--all', @AT_ONCE, '--out-dir', $set_dir, @FIXED_TUNING, '--json', $train_file ]);
    is $st, 0, 'train --all from a file: exit 0' or diag $err;
    my $r = json_of($out);
    my $p = by_prefix($r);
    is join(' ', sort keys %$p), '(none) compat: gh: npm: tiny:', '... names every prefix, and the keys without one';
    for my $f (qw(gh npm compat)) {
        is $p->{"$f:"}{action}, 'added', "... $f: gets a dictionary";
        my $c = $p->{"$f:"}{choice};
        ok $c && $c->{memory} < $p->{"$f:"}{baseline}{memGzip}{memory},
            "... $f: its held-out memory ($c->{memory}) is below memGzip's ($p->{\"$f:\"}{baseline}{memGzip}{memory})";
        ok defined $c->{us_compress} && defined $c->{memGzip_us_compress}, "... $f: timed against memGzip";
        my @beaten = grep { $_->{verdict} ne 'chosen' } @{ $p->{"$f:"}{candidates} };
        ok scalar(@beaten), "... $f: with the alternatives it beat (" . scalar(@beaten) . ')';
        ok !(grep { $_->{verdict} eq 'more memory' && $_->{memory} < $c->{memory} } @beaten),
            "... $f: none of which took less memory and was fast enough";
    }
    my @candidates = map { @{ $p->{"$_:"}{candidates} || [] } } qw(gh npm compat);
    is_deeply [ grep { $_->{size} != 4096 || $_->{method} !~ /\A(?:samples|fastcover)\z/ || $_->{level} !~ /\A[39]\z/ }
                @candidates ], [], '--size 4096 --levels 3,9 --methods samples,fastcover: the only candidates tried ('
                                 . scalar(@candidates) . ')';
    is $p->{'tiny:'}{action}, 'none', 'a prefix of 3 values gets no dictionary';
    like $p->{'tiny:'}{why}, qr/too few values/, '... because they are too few';
    ok exists $p->{'(none)'} && $p->{'(none)'}{action} eq 'none', 'keys without the delimiter: no dictionary';
    ok $r->{fallback}{method} =~ /\A(?:gzip|zstd)\z/, "the fallback measured: $r->{fallback}{method} level $r->{fallback}{level}";
}

my $set = Cache::Memcached::RustXS::Zstd::DictionarySet->read($set_dir);
my %entry = map { ($_->{prefix} => $_) } grep { length $_->{prefix} } $set->entries;    # t/53: the whole cache
is join(' ', sort keys %entry), 'compat: gh: npm:', 'the set: a dictionary for each of the three JSON prefixes';
my @ids = map { $_->{id} } values %entry;
ok !(grep { $_ < 65536 || $_ > 4294967295 } @ids), "... with random 32-bit IDs from 65536 up (@ids)";
is scalar(keys %{ { map { ($_ => 1) } @ids } }), 3, '... three of them';
ok !(grep { $_->{level} < 3 || $_->{level} > 19 } values %entry), '... at levels 3 to 19';
ok $set->verify, '... every file as the manifest says';
ok !(grep { !defined $_->{savings} || !defined $_->{memory_savings} || !$_->{samples} } values %entry),
    '... with the savings measured and the samples counted';
is $set->fallback->{method} =~ /\A(?:gzip|zstd)\z/ ? 1 : 0, 1, 'the fallback is in the manifest';

# Frames the set's writers make name the set's ID, decode here and with
# zstd -d -D, and a stock gunzip refuses them.
{
    my $m = Cache::Memcached::RustXS::Zstd::compress_methods(dictionaries => $set_dir, prefix => 'gh:');
    my $value = $held->{gh}[0][1];
    my $frame;
    ok $m->[0]->(\$value, \$frame), "the set's gh: writer compresses";
    is Cache::Memcached::RustXS::Zstd::frame_dictionary_id($frame), $entry{'gh:'}{id}, '... naming its ID';
    is Cache::Memcached::RustXS::Zstd::decompress($frame), $value, '... and it decompresses';
    is Compress::Zlib::memGunzip(my $copy = $frame), undef, "... and Compress::Zlib's memGunzip (stock readers) refuses it";
    SKIP: {
        skip 'the zstd command is not in PATH', 1 unless $HAVE_ZSTD;
        my $in = spew(File::Spec->catfile($TMP, 'frame.zst'), $frame);
        my $got = `zstd -q -d -c -D '$set_dir/$entry{'gh:'}{file}' '$in'`;
        is $got, $value, 'zstd -d -D FILE decodes it';
    }
}

# The default speed limits: whatever the timings on this machine, the
# choice keeps to them by its own measures, or there is none and the
# report says none was fast enough.
SKIP: {
    skip 'JSON::PP is needed for --json', 1 unless $HAVE_JSON;
    my $dir = File::Spec->catfile($TMP, 'limits');
    my $file = dump_file('compat.values', @{ $train->{compat} });
    my ($st, $out, $err) = run_dict([ 'train', '--all', @AT_ONCE, '--out-dir', $dir, @FIXED_TUNING, '--json', '--compress-time', '1',
                                      '--decompress-time', '1', $file ]);
    is $st, 0, 'train --all with the default limits given' or diag $err;
    my $p = by_prefix(json_of($out))->{'compat:'};
    if (my $c = $p->{choice}) {
        ok $c->{us_compress} <= $c->{memGzip_us_compress} && $c->{us_decompress} < $c->{gzip_us_decompress},
            "... the choice compresses no slower than memGzip ($c->{us_compress} <= $c->{memGzip_us_compress} us) "
          . "and decompresses faster than our gzip ($c->{us_decompress} < $c->{gzip_us_decompress} us)";
        my @slow = grep { $_->{verdict} =~ /slower|no faster/ } @{ $p->{candidates} };
        ok !(grep { $_->{us_compress} <= $_->{memGzip_us_compress} && $_->{us_decompress} < $_->{gzip_us_decompress} } @slow),
            '... and every candidate called too slow was';
    } else {
        like $p->{no_dictionary}, qr/fast enough/, '... none was fast enough here, and it says so';
        SKIP: { skip 'no dictionary was chosen: no choice to compare with memGzip', 1 }
    }
}

# ---- a rerun: kept, replaced, added; no file removed ------------------------------

my @files_before = sort glob "$set_dir/*.dict";
{
    my ($st, $out, $err) = run_dict([ 'train', '--all', @AT_ONCE, '--out-dir', $set_dir, @FIXED_TUNING, $train_file ]);
    is $st, 0, 'train --all again on the same values: exit 0' or diag $err;
    like $out, qr/^\s+gh:\s+kept\b/m, '... gh: is kept (a new one is not 5 % better)';
    my $again = Cache::Memcached::RustXS::Zstd::DictionarySet->read($set_dir);
    is_deeply [ sort map { "$_->{entry}{prefix}$_->{entry}{id}$_->{state}" } $again->schedule ],
              [ sort map { "$_->{entry}{prefix}$_->{entry}{id}$_->{state}" } $set->schedule ], '... the set is as it was';
}
{
    # A first set of few npm values, then the whole half: replaced.
    my $small_dir = File::Spec->catfile($TMP, 'small');
    my $few_npm = dump_file('few-npm.values', @{ $train->{npm} }[0 .. 15]);
    my ($st, $out, $err) = run_dict([ 'train', '--all', @AT_ONCE, '--out-dir', $small_dir, @FIXED_TUNING, $few_npm ]);
    is $st, 0, 'train --all on 16 npm values' or diag $err;
    my $first = Cache::Memcached::RustXS::Zstd::DictionarySet->read($small_dir)->current('npm:');
    ok $first, '... gives npm: a dictionary';
    my $more = dump_file('more.values', @{ $train->{npm} }, @{ $train->{method} });
    ($st, $out, $err) = run_dict([ 'train', '--all', @AT_ONCE, '--out-dir', $small_dir, @FIXED_TUNING, '--if-better', '1', $more ]);
    is $st, 0, 'train --all on all of them, --if-better 1' or diag $err;
    my $s = Cache::Memcached::RustXS::Zstd::DictionarySet->read($small_dir);
    my $now = $s->current('npm:');
    isnt $now->{id}, $first->{id}, '... npm: has a new dictionary' or diag $out;
    is +(grep { $_->{entry}{id} == $first->{id} } $s->schedule)[0]{state}, 'retired', '... the old one is retired';
    ok -f $s->path_of($first->{id}), '... and its file is still there';
    ok $s->current('method:'), '... and the new prefix method: got one';
    cmp_ok $s->current('method:')->{id}, '>=', 65536, '... with a random ID';
    like $out, qr/^\s+npm:\s+replaced\b/m, '... the report says replaced';
}
is_deeply [ grep { !-f $_ } @files_before ], [], 'no dictionary file was removed by a rerun';

# ---- standard input -------------------------------------------------------------------

{
    my $dir = File::Spec->catfile($TMP, 'stdin-set');
    my ($st, $out, $err) = run_dict([ 'train', '--all', @AT_ONCE, '--out-dir', $dir, @FIXED_TUNING, '-' ], stdin => dump_of(@{ $train->{compat} }));
    is $st, 0, 'train --all from standard input' or diag $err;
    ok(Cache::Memcached::RustXS::Zstd::DictionarySet->read($dir)->current('compat:'), '... writes compat:');
}

# ---- report --dictionaries from files ---------------------------------------------------

{
    # Today's values: gh's other half stored with the set's writer (naming
    # its ID), npm's raw, and a prefix the set does not have.
    my $m = Cache::Memcached::RustXS::Zstd::compress_methods(dictionaries => $set_dir, prefix => 'gh:');
    my @gh = map { my ($k, $v) = @$_; my $f; $m->[0]->(\$v, \$f); [ $k, $f, 2 ] } @{ $held->{gh} };
    my $today = dump_file('today.values', @gh, @{ $held->{npm} }, @{ $held->{method} });
    SKIP: {
        skip 'JSON::PP is needed for --json', 1 unless $HAVE_JSON;
        my ($st, $out, $err) = run_dict([ 'report', '--dictionaries', $set_dir, @FIXED_TUNING, '--json', $today ]);
        is $st, 0, 'report --dictionaries: exit 0' or diag $err;
        my $r = json_of($out);
        my $p = by_prefix($r);
        is join(' ', sort keys %$p), 'compat: gh: method: npm:', '... names every prefix, sampled or in the set';
        like $p->{'gh:'}{verdict}, qr/\A(?:current|retrain)\z/, "... gh: $p->{'gh:'}{verdict}";
        ok defined $p->{'gh:'}{current}{memory}, '... the current dictionary measured on the held-out values';
        is $p->{'compat:'}{verdict}, 'no keys sampled', '... compat: no keys sampled';
        is $p->{'method:'}{verdict}, 'train', '... method: has none, and one is worth it';
        my %named = %{ named_by($r) };
        is $named{ $entry{'gh:'}{id} }, scalar @gh, "... every stored gh: value names gh:'s ID";
        is $named{ $entry{'npm:'}{id} }, 0, "... no sampled value names npm:'s";
    }
    # As text, on gh:'s values alone (the JSON report above measured the rest).
    my $gh_today = dump_file('gh-today.values', @gh);
    my ($st, $out, $err) = run_dict([ 'report', '--dictionaries', $set_dir, @FIXED_TUNING, $gh_today ]);
    is $st, 0, 'report --dictionaries as text';
    like $out, qr/^\s+gh:\s.*\b(?:current|retrain)\b/m, "... with gh:'s verdict";
    like $out, qr/no sampled value names it/, '... says which dictionaries no sampled value names';
}

# A set whose fresh dictionary would be much better: retrain.
{
    my $dir = File::Spec->catfile($TMP, 'weak');
    my $weak = dump_file('weak.values', @{ $train->{npm} }[0 .. 9]);
    my ($st) = run_dict([ 'train', '--all', @AT_ONCE, '--out-dir', $dir, @FIXED_TUNING, $weak ]);
    is $st, 0, 'a set trained on 10 npm values';
    my $today = dump_file('npm-today.values', @{ $train->{npm} }, @{ $held->{npm} });
    (my $st2, my $out) = run_dict([ 'report', '--dictionaries', $dir, @FIXED_TUNING, $today ]);
    is $st2, 0, 'report on it with all of npm';
    like $out, qr/^\s+npm:.*\bretrain\b/m, '... says retrain';
}

# ---- errors -------------------------------------------------------------------------------

for my $case (
    [ [ 'train', '--all', $train_file ], 2, qr/--out-dir DIR is needed/, 'train --all without --out-dir' ],
    [ [ 'train', '--all', '--out-dir', $set_dir, '--out', 'x', $train_file ], 2, qr/not --out/, '--out with --all' ],
    [ [ 'train', '--all', '--out-dir', $set_dir ], 2, qr/are needed/, 'no source' ],
    [ [ 'train', '--all', '--out-dir', $set_dir, '--if-better', 'lots', $train_file ], 2, qr/--if-better must be a number/, 'a bad --if-better' ],
    [ [ 'train', '--out-dir', $set_dir, $train_file ], 2, qr/--out-dir is for --all/, '--out-dir without --all' ],
    [ [ 'train', '--all', '--out-dir', $set_dir, '--stage', 'soon', $train_file ], 2, qr/--stage must be a duration/,
      'a bad --stage' ],
    [ [ 'train', '--out', 'x', '--stage', '1h', $train_file ], 2, qr/--stage is for --all/, '--stage without --all' ],
    [ [ 'report', '--dictionaries', $set_dir, '--stage', '0', $train_file ], 2, qr/unknown option --stage/,
      'report --dictionaries --stage' ],
    [ [ 'report', '--if-better', '5', '--server', '127.0.0.1:1' ], 2, qr/--if-better is for --dictionaries/, 'report --if-better without a set' ],
    [ [ 'train', '--all', '--out-dir', $set_dir, '--null', '-' ], 2, qr/--null/, '--null with --all' ],
    [ [ 'train', '--all', '--out-dir', File::Spec->catfile($TMP, 'x'), spew("$TMP/cut.values", "VALUE a:1 0 100\r\nshort") ],
      1, qr/cut short/, 'a file cut short' ],
    [ [ 'train', '--all', '--out-dir', File::Spec->catfile($TMP, 'x'), spew("$TMP/noend.values", "VALUE a:1 0 1\r\nx\r\n") ],
      1, qr/no END line/, 'a file without END' ],
    [ [ 'train', '--all', '--out-dir', File::Spec->catfile($TMP, 'x'), spew("$TMP/text.values", "just text\n") ],
      1, qr/not a memcached get response/, 'a file of something else' ],
    [ [ 'report', '--dictionaries', File::Spec->catfile($TMP, 'nothing'), $train_file ], 1, qr/manifest/, 'report on a folder without a set' ],
) {
    my ($args, $want, $re, $name) = @$case;
    my ($st, $out, $err) = run_dict($args);
    is $st, $want, "$name: exit $want";
    like $err, $re, "... $name: says so";
}
ok !-e File::Spec->catfile($TMP, 'x', 'manifest'), 'nothing written by a failed run';

done_testing;
