#!/usr/bin/perl
# cmrx-dict list and rollback on a dictionary set made here (no server, no
# tuning): each dictionary's state and since when, as text and JSON; a
# rollback to the dictionary before the current one,
# at once to one writers used (staged by default to one they never used),
# to a chosen one with --to, the cancelling of a
# staged retrain, --dry-run, and clean refusals; prune keeps a staged
# dictionary.
use strict;
use warnings;

use lib 't/lib', 'dev/lib';
use Test::More;
use File::Temp ();
use JSON::PP ();
use POSIX ();
use Cache::Memcached::RustXS::Zstd qw(train_dictionary);
use Cache::Memcached::RustXS::Zstd::DictionarySet;
use CMRXDev::Corpus qw(corpus_values);
use CMRXTest::Peers qw(slurp);
use CMRXTest::DictSets qw(run_dict);

my $Set = 'Cache::Memcached::RustXS::Zstd::DictionarySet';
my $TMP = File::Temp->newdir;
my $HOUR = 3600;
my $corpus = corpus_values('bench/data/values');
my @gh = map { $_->[1] } @{ $corpus->{gh} };
my @dict = map { train_dictionary([ @gh[ 20 * $_ .. 20 * $_ + 19 ] ], size => 2048) } 0 .. 2;

sub date { POSIX::strftime('%Y-%m-%dT%H:%M:%SZ', gmtime $_[0]) }
sub json_of {
    my ($args) = @_;
    my ($status, $out, $err) = run_dict([ @$args, '--json' ]);
    is $status, 0, "cmrx-dict @$args --json: exit 0" or diag $err;
    return eval { JSON::PP->new->decode($out) } || {};
}
sub states { my ($list) = @_; return { map { ($_->{id} => $_->{state}) } @{ $list->{dictionaries} } } }

# A prefix trained twice, the second staged for an hour from now.
my $dir = "$TMP/set";
my $set = $Set->create($dir);
my $first = $set->add(prefix => 'gh:', dictionary => $dict[0], level => 3, id => 101)->{id};
my $second = $set->add(prefix => 'gh:', dictionary => $dict[1], level => 3, id => 102)->{id};
my $staged_at = time + $HOUR;
my $third = $set->add(prefix => 'gh:', dictionary => $dict[2], level => 3, id => 103,
                      current_from => $staged_at)->{id};
$set->write;

my ($status, $out, $err) = run_dict([ 'list', '--dictionaries', $dir ]);
is $status, 0, 'list: exit 0' or diag $err;
like $out, qr/^  103\s+gh:\s+staged\s+\Q${\ date($staged_at)}\E\s+3\s+\d+\s+gh-103\.dict$/m,
    'list: the staged one, from when';
like $out, qr/^  102\s+gh:\s+current\s/m, '... the current one';
like $out, qr/^  101\s+gh:\s+retired\s+\d{4}-/m, '... and the retired one, since when';
like $out, qr/^Next change: \Q${\ date($staged_at)}\E\.$/m, '... and when the next change comes';
my $list = json_of([ 'list', '--dictionaries', $dir ]);
is_deeply states($list), { 101 => 'retired', 102 => 'current', 103 => 'staged' }, 'list --json: the same states';
is $list->{next_change}, date($staged_at), '... and the next change';

# A rollback while a retrain is staged: it is cancelled, the current one stays.
($status, $out, $err) = run_dict([ 'rollback', '--dictionaries', $dir, '--prefix', 'gh:', '--dry-run' ]);
is $status, 0, 'rollback --dry-run: exit 0' or diag $err;
like $out, qr/^Would cancel decision 3 \(train of dictionary 103, due \Q${\ date($staged_at)}\E\): writers of gh: stay on dictionary 102\.$/m,
    '... saying it would cancel the staged one';
is_deeply states(json_of([ 'list', '--dictionaries', $dir ])), { 101 => 'retired', 102 => 'current', 103 => 'staged' },
    '... and changing nothing';
my $r = json_of([ 'rollback', '--dictionaries', $dir, '--prefix', 'gh:' ]);
is_deeply [ @$r{qw(kind from to)}, $r->{cancelled}{id} ], [ 'cancel', 102, 102, 103 ], 'rollback: the staged retrain cancelled';
is_deeply states(json_of([ 'list', '--dictionaries', $dir ])), { 101 => 'retired', 102 => 'current', 103 => 'retired' },
    '... it is retired, the current one stays';

# A rollback to the dictionary before (one writers used): at once.
$r = json_of([ 'rollback', '--dictionaries', $dir, '--prefix', 'gh:' ]);
is_deeply [ @$r{qw(kind from to at_once)} ], [ 'rollback', 102, 101, 1 ], 'rollback: to the one before, at once';
is_deeply states(json_of([ 'list', '--dictionaries', $dir ])), { 101 => 'current', 102 => 'retired', 103 => 'retired' },
    '... writers use it now';

# --to one no writer has used: staged an hour by default.
my $before = time;
$r = json_of([ 'rollback', '--dictionaries', $dir, '--prefix', 'gh:', '--to', 103 ]);
is_deeply [ @$r{qw(from to at_once)} ], [ 101, 103, 0 ], 'rollback --to a dictionary never used: staged';
ok $r->{current_from} gt date($before + $HOUR) && $r->{current_from} le date(time + $HOUR + 2),
    '... an hour after the set was written';
$list = json_of([ 'list', '--dictionaries', $dir ]);
is_deeply states($list), { 101 => 'current', 102 => 'retired', 103 => 'staged' }, '... the current one writes until then';

# --stage 0 and --to: at once, to a chosen one.
$r = json_of([ 'rollback', '--dictionaries', $dir, '--prefix', 'gh:', '--to', 102, '--stage', 0 ]);
is_deeply [ @$r{qw(from to at_once)}, $r->{cancelled}{id} ], [ 101, 102, 1, 103 ],
    'rollback --to 102 --stage 0: at once, cancelling what was staged';
is_deeply states(json_of([ 'list', '--dictionaries', $dir ])), { 101 => 'retired', 102 => 'current', 103 => 'retired' },
    '... 102 is current';
is $Set->read($dir)->current('gh:')->{id}, 102, '... for the writers that read the set';

# prune keeps a staged dictionary whatever its age.
$set = $Set->read($dir);
$set->retire(101, retired => time - 30 * 86400);
$set->make_current(101, current_from => time + $HOUR);
$set->write;
my $dump = "$TMP/empty.dump";
open my $fh, '>', $dump or die $!;
print {$fh} "END\r\n";
close $fh;
($status, $out, $err) = run_dict([ 'prune', '--dictionaries', $dir, '--retired-for', 0, $dump ]);
is $status, 0, 'prune: exit 0' or diag $err;
like $out, qr/^  101 .* kept\s+staged: current from /m, 'prune keeps a staged dictionary';
like $out, qr/^  103 .* removed\s/m, '... and removes a retired one no value names';

# After a staged retrain has taken effect, with the clock moved (the
# module's clock here, CMRX_DICT_NOW for the commands): the default
# rollback goes back to the dictionary the retrain took over from, staged
# from the write; a write after the staged time loses nothing.
{
    my $d = "$TMP/effect";
    my $t0 = 2_000_000_000;
    my $now = $t0;
    local $Cache::Memcached::RustXS::Zstd::DictionarySet::State::Clock = sub { $now };
    my $s = $Set->create($d);
    $s->add(prefix => 'gh:', dictionary => $dict[0], level => 3, id => 201);
    $s->write;
    $s = $Set->read($d);
    $s->add(prefix => 'gh:', dictionary => $dict[1], level => 3, id => 202, stage => 15);
    $s->write;
    is +(grep { $_->{entry}{id} == 202 } $s->schedule)[0]{since}, date($t0 + 16),
        'stage => 15: from the write on, 15 s and one for the command to end';
    $now = $t0 + 20;
    local $ENV{CMRX_DICT_NOW} = $now;
    is_deeply states(json_of([ 'list', '--dictionaries', $d ])), { 201 => 'retired', 202 => 'current' },
        'CMRX_DICT_NOW past the staged time: list says the retrain is current';
    my $before = join ',', map { "$_->{entry}{id}=$_->{state}" } $Set->read($d)->schedule(at => $t0 + 10);
    $s = $Set->read($d);
    is $s->previous('gh:')->{id}, 201, '... and the one before it is the first';
    $s->write;    # after the staged time
    $s = $Set->read($d);
    is $s->previous('gh:')->{id}, 201, 'written after its time: the one before is still the first';
    is join(',', map { "$_->{entry}{id}=$_->{state}" } $s->schedule(at => $t0 + 10)), $before,
        '... and what the set was before the staged time is unchanged';
    ($status, $out, $err) = run_dict([ 'rollback', '--dictionaries', $d, '--prefix', 'gh:', '--stage', '6s',
                                       '--dry-run' ]);
    is $status, 0, 'rollback --prefix gh: --stage 6s (no --to) after the retrain took effect: exit 0' or diag $err;
    like $out, qr/\b201\b/, '... it names the first dictionary' or diag $out;
    my $r = json_of([ 'rollback', '--dictionaries', $d, '--prefix', 'gh:', '--stage', '6s' ]);
    is_deeply [ @$r{qw(from to)} ], [ 202, 201 ], '... back from the retrain to the first';
    is $r->{current_from}, date($now + 7), '... at the time it says';
    my $list = json_of([ 'list', '--dictionaries', $d ]);
    my ($first) = grep { $_->{id} == 201 } @{ $list->{dictionaries} };
    is_deeply [ $first->{state}, $first->{since} ], [ 'staged', date($now + 7) ],
        '... staged 6 s after the write (and one), as list shows';
    local $ENV{CMRX_DICT_NOW} = $now + 7;
    is_deeply states(json_of([ 'list', '--dictionaries', $d ])), { 201 => 'current', 202 => 'retired' },
        'at its time the first is current again';
    ($status, $out, $err) = run_dict([ 'rollback', '--dictionaries', $d, '--prefix', 'gh:', '--to', 201 ]);
    is $status, 1, 'rollback --to the current one, nothing pending: exit 1';
    like $err, qr/\Acmrx-dict: rollback: dictionary 201 is the current one of the prefix gh: already, and nothing is pending to replace it\n\z/,
        '... one line for people: no sub name, no source line';
    local $ENV{CMRX_DICT_NOW} = $t0 + 1;
    my $manifest = slurp("$d/manifest");
    ($status, $out, $err) = run_dict([ 'rollback', '--dictionaries', $d, '--prefix', 'gh:', '--to', 202 ]);
    is $status, 1, 'a clock behind the log: exit 1';
    like $err, qr/\Acmrx-dict: the clock says \Q${\ date($t0 + 1)}\E, earlier than the newest line of the set's log \(line \d+, \S+Z\): time only moves forward: nothing was changed; run it where the clock is right\n\z/,
        '... naming both times';
    is slurp("$d/manifest"), $manifest, '... and the manifest unchanged';
}

# Refusals.
for my $case (
    [ [ 'list' ], 2, qr/list: --dictionaries DIR is needed/ ],
    [ [ 'list', '--dictionaries', "$TMP/none" ], 1, qr/is not a dictionary set/ ],
    [ [ 'rollback', '--dictionaries', $dir ], 2, qr/rollback: --prefix P is needed/ ],
    [ [ 'rollback', '--dictionaries', $dir, '--prefix', 'npm:' ], 1, qr/has no dictionary for the prefix npm:/ ],
    [ [ 'rollback', '--dictionaries', $dir, '--prefix', 'gh:', '--to', 103 ], 1, qr/dictionary 103 was removed/ ],
    [ [ 'rollback', '--dictionaries', $dir, '--prefix', 'gh:', '--to', 'x' ], 2, qr/--to must be a dictionary ID/ ],
    [ [ 'rollback', '--dictionaries', $dir, '--prefix', 'gh:', '--stage', 'soon' ], 2, qr/--stage must be a duration/ ],
) {
    my ($args, $want, $says) = @$case;
    ($status, $out, $err) = run_dict($args);
    is $status, $want, "cmrx-dict @$args: exit $want";
    like $err, $says, '... saying why';
}

done_testing;
