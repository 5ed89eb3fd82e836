#!/usr/bin/perl
# Staged dictionaries and writers that follow their set, without a server:
# Cache::Memcached::RustXS::Zstd::DictionarySet's schedule (an entry added
# with current_from is loaded by readers at once and becomes its prefix's
# writing dictionary only from then; make_current rolls a prefix back to an
# earlier dictionary, staged the same way, and cancels what was staged;
# settle writes down what the schedule says; a staged entry reads as a
# retired one to a release that knows no staging), random dictionary IDs
# (new_id), and Cache::Memcached::RustXS::Zstd::compress_methods with a set:
# its compressor starts writing a staged dictionary at its time, and takes
# up a dictionary added to the folder or a rollback within the rescan
# interval, in the same process.
use strict;
use warnings;

use lib 't/lib', 'dev/lib';
use Test::More;
use File::Temp ();
use POSIX ();
use Cache::Memcached::RustXS::Zstd qw(train_dictionary compress_methods frame_dictionary_id decompress);
use Cache::Memcached::RustXS::Zstd::DictionarySet;
use CMRXDev::Corpus qw(corpus_values);

my $Set = 'Cache::Memcached::RustXS::Zstd::DictionarySet';
my $TMP = File::Temp->newdir;
my $HOUR = 3600;

my $corpus = corpus_values('bench/data/values');
my @gh  = map { $_->[1] } @{ $corpus->{gh} };
my @npm = map { $_->[1] } @{ $corpus->{npm} };
my @dict = map { train_dictionary($_, size => 4096) } [ @gh[0 .. 39] ], [ @gh[40 .. 79] ], [ @npm[0 .. 39] ],
                                                      [ reverse @gh[0 .. 39] ];

sub date { POSIX::strftime('%Y-%m-%dT%H:%M:%SZ', gmtime $_[0]) }
sub error_of { my ($code) = @_; eval { $code->(); 1 } ? '' : $@ }
sub states { my ($set, @at) = @_; return { map { ($_->{entry}{id} => $_->{state}) } $set->schedule(@at) } }
sub id_of { my ($e) = @_; $e ? $e->{id} : undef }

# ---- the schedule ----------------------------------------------------------

my $now = time;
my $set = $Set->create("$TMP/schedule");
my $a = $set->add(prefix => 'gh:', dictionary => $dict[0], level => 3, id => 11);
is $a->{state}, 'current', 'added without current_from: current at once';
my $b = $set->add(prefix => 'gh:', dictionary => $dict[1], level => 6, id => 12,
                  current_from => $now + $HOUR);
is_deeply [ @$b{qw(state current_from)} ], [ 'retired', date($now + $HOUR) ],
    'added with a later current_from: staged (retired, with the date, for releases that know no staging)';
is id_of($set->current('gh:')), 11, 'writers use the earlier dictionary until then';
is id_of($set->current('gh:', at => $now + $HOUR - 1)), 11, '... to the last second';
is id_of($set->current('gh:', at => $now + $HOUR)), 12, '... and the staged one from its time';
is id_of($set->for_key('gh:repo:1', at => $now + $HOUR)), 12, 'for_key follows the schedule too';
is $set->next_change, $now + $HOUR, 'next_change: when the staged one starts';
is $set->next_change(at => $now + $HOUR), undef, '... and nothing after it';
is_deeply states($set), { 11 => 'current', 12 => 'staged' }, 'schedule: current and staged';
my ($row) = grep { $_->{entry}{id} == 12 } $set->schedule;
is $row->{since}, date($now + $HOUR), '... a staged one since when it starts';
is_deeply states($set, at => $now + $HOUR), { 11 => 'retired', 12 => 'current' }, '... and at its time';
like error_of(sub { $set->current('gh:', at => 'soon') }), qr/\Acurrent: at must be epoch seconds/,
    'at must be a time';

$set->write;
my $text = do { local (@ARGV, $/) = "$TMP/schedule/manifest"; <> };
like $text, qr/^dictionary id=12 prefix=gh: state=retired current_from=\Q${\ date($now + $HOUR)}\E /m,
    'the manifest: a release without staging loads it for reading only';
like $text, qr/^dictionary id=11 prefix=gh: state=current /m, '... and keeps writing the current one';
my $read = $Set->read("$TMP/schedule");
is_deeply states($read), { 11 => 'current', 12 => 'staged' }, 'read back: the same schedule';

$read->settle(at => $now + $HOUR + 5);
my %e = map { ($_->{id} => $_) } $read->entries;
is_deeply [ @{ $e{12} }{qw(state current_from)} ], [ 'current', date($now + $HOUR) ],
    'settle after its time: the staged one is current';
is_deeply [ @{ $e{11} }{qw(state retired)} ], [ 'retired', date($now + $HOUR) ],
    '... and the one it took over from retired at that time';

# Rollback: a prefix's earlier dictionary made current again, staged.
my $roll = $Set->create("$TMP/rollback");
$roll->add(prefix => 'gh:', dictionary => $dict[0], level => 3, id => 21);
$roll->add(prefix => 'gh:', dictionary => $dict[1], level => 3, id => 22);
is id_of($roll->current('gh:')), 22, 'a retrained prefix: the new one is current';
like error_of(sub { $roll->make_current(22) }), qr/is the current one of prefix 'gh:' already/,
    'make_current of the current one, nothing staged: refused';
$roll->make_current(21, current_from => $now + $HOUR);
is id_of($roll->current('gh:')), 22, 'rolled back with a later time: the current one stays until then';
is id_of($roll->current('gh:', at => $now + $HOUR)), 21, '... then the earlier one again';
$roll->add(prefix => 'gh:', dictionary => $dict[3], level => 3, id => 23, current_from => $now + 2 * $HOUR);
$roll->make_current(21);
is id_of($roll->current('gh:')), 21, 'rolled back at once';
is_deeply states($roll, at => $now + 3 * $HOUR), { 21 => 'current', 22 => 'retired', 23 => 'retired' },
    '... cancelling what was staged for the prefix';
$roll->add(prefix => 'gh:', dictionary => $dict[1], level => 3, id => 24, current_from => $now + $HOUR);
$roll->retire(24);
is id_of($roll->current('gh:', at => $now + 2 * $HOUR)), 21, 'a staged dictionary retired is not used';
$roll->write;
my $retired23 = (grep { $_->{id} == 23 } $roll->entries)[0];
ok $retired23->{retired} && $retired23->{current_from},
    'a cancelled one is retired, with a date (no longer staged), and keeps the date it was staged for';
is_deeply states($roll, at => $now + 3 * $HOUR)->{23}, 'retired', '... and is never used';
$roll = $Set->read("$TMP/rollback");
$roll->remove(22);
like error_of(sub { $roll->make_current(22) }), qr/was removed from the set/, 'make_current of a removed one: refused';
like error_of(sub { $roll->make_current(99) }), qr/no dictionary with ID '99'/, '... of an unknown one too';
like error_of(sub { $roll->make_current(21, from => 1) }), qr/unknown option\(s\): from/, '... and unknown options';

# A dictionary added at once while another is staged: the newest decision holds.
my $over = $Set->create("$TMP/over");
$over->add(prefix => 'gh:', dictionary => $dict[0], level => 3, id => 51);
$over->add(prefix => 'gh:', dictionary => $dict[1], level => 3, id => 52, current_from => $now + $HOUR);
$over->add(prefix => 'gh:', dictionary => $dict[3], level => 3, id => 53);
is id_of($over->current('gh:', at => $now + 2 * $HOUR)), 53,
    'a dictionary added at once cancels what was staged for its prefix';
is_deeply states($over, at => $now + 2 * $HOUR), { 51 => 'retired', 52 => 'retired', 53 => 'current' },
    '... which is retired';

# A new prefix staged: no dictionary of its own until then.
my $new = $Set->create("$TMP/new-prefix");
$new->add(prefix => 'npm:', dictionary => $dict[2], level => 3, current_from => $now + $HOUR, id => 31);
is_deeply [ $new->prefixes ], [], 'a new prefix staged: not among the prefixes yet';
is_deeply [ $new->prefixes(at => $now + $HOUR) ], [ 'npm:' ], '... from its time';

# A manifest's current_from must be a date.
(my $bad = $text) =~ s/current_from=\S+/current_from=tomorrow/;
mkdir "$TMP/bad";
open my $fh, '>', "$TMP/bad/manifest" or die $!;
print {$fh} $bad;
close $fh;
like error_of(sub { $Set->read("$TMP/bad") }), qr/line \d+: current_from must be YYYY-MM-DDTHH:MM:SSZ/,
    'a malformed current_from: the manifest is refused, naming the line';

# ---- random IDs ------------------------------------------------------------

my %seen;
my $ids = $Set->create("$TMP/ids");
my @drawn = map { $ids->new_id } 1 .. 200;
ok !(grep { $_ < 65536 || $_ > 4294967295 } @drawn), 'new_id: 32-bit IDs from 65536 up (4 bytes in a frame)';
is scalar(grep { !$seen{$_}++ } @drawn), 200, '... 200 draws, 200 IDs';
{
    no warnings 'redefine';
    my @draws = (70000 - 65536, 70000 - 65536, 80000 - 65536, 90000 - 65536);
    local *Cache::Memcached::RustXS::Zstd::DictionarySet::IDs::random_u32 = sub { shift @draws };
    $ids->add(prefix => 'x:', dictionary => $dict[0], level => 3, id => 80000);
    is $ids->new_id(avoid => [70000]), 90000, 'new_id avoids the IDs asked, and those of the set';
}

# ---- a writer follows its set ----------------------------------------------

# The clock is moved, never waited for: the writers and the set read it.
my $clock = time;
local $Cache::Memcached::RustXS::Zstd::DictionarySet::State::Clock = sub { $clock };
my $dir = "$TMP/followed";
my $live = $Set->create($dir);
$live->add(prefix => 'gh:', dictionary => $dict[0], level => 3, id => 41);
my $starts = $clock + 2;
$live->add(prefix => '', dictionary => $dict[2], level => 3, id => 43, current_from => $starts);
$live->add(prefix => 'gh:', dictionary => $dict[1], level => 3, id => 42, current_from => $starts);
$live->add(prefix => 'npm:', dictionary => $dict[2], level => 3, id => 45, current_from => $starts);
$live->write;
my @warnings;
local $SIG{__WARN__} = sub { push @warnings, $_[0] };
my $gh = compress_methods(dictionaries => $dir, prefix => 'gh:', rescan_interval => 0.2);
my $whole = compress_methods(dictionaries => $dir, rescan_interval => 0.2);
is_deeply \@warnings, [], 'writers of a set with staged entries: made without a warning';

sub written_with {
    my ($methods, $value) = @_;
    $value = $gh[0] unless defined $value;
    my $out;
    $methods->[0]->(\$value, \$out) or return 'declined';
    my $back;
    $methods->[1]->(\$out, \$back) && $back eq $value or return 'unreadable';
    return 'gzip' if substr($out, 0, 2) eq "\x1f\x8b";
    return frame_dictionary_id($out);
}

{
    my @said;
    local $SIG{__WARN__} = sub { push @said, $_[0] };
    my $later = compress_methods(dictionaries => $dir, prefix => 'npm:', rescan_interval => 0.2);
    is_deeply \@said, [], 'a prefix whose dictionary is staged: no warning that it matches none';
    my $never = compress_methods(dictionaries => $dir, prefix => 'zz', rescan_interval => 0.2);
    is scalar(grep { /prefix 'zz' matches no dictionary/ } @said), 1, '... one that never will: warned';
}
is written_with($gh), 41, 'before the staged time: the current dictionary';
is written_with($whole), 'gzip', 'a whole-cache entry that is only staged: the fallback before its time';
$clock = $starts;
is written_with($gh), 42, 'from its time: the staged one, in the same process';
is written_with($whole), 43, '... the whole-cache writer too';

# Another writer of the folder (a new host's copy, a retrain) adds and rolls back.
my $other = $Set->read($dir);
$other->add(prefix => 'gh:', dictionary => $dict[3], level => 3, id => 44);
$other->write;
is written_with($gh), 42, 'a dictionary added to the folder: not before the rescan interval has passed';
$clock += 0.2;
is written_with($gh), 44, '... and from then'
    or diag explain [ map { "$_->{entry}{id} $_->{state}" } $Set->read($dir)->schedule ];
$other = $Set->read($dir);
$other->make_current(41);
$other->write;
$clock += 0.2;
is written_with($gh), 41, 'a rollback: the earlier dictionary again, within the rescan interval';
is decompress(do { my $o; $gh->[0]->(\$gh[1], \$o); $o }), $gh[1], 'and every value reads back';
is_deeply \@warnings, [], 'no warning on the way';

# ---- the decision log and releases that know none -------------------------------

{
    require './t/data/v0101/DictionarySet0101.pm';
    # Release 0.101 reads the system's clock: the decisions here are made
    # in the last quarter of an hour, the staged one due after the test.
    my $t0 = int(time) - 1000;
    my $now = $t0;
    local $Cache::Memcached::RustXS::Zstd::DictionarySet::State::Clock = sub { $now };
    my $d = "$TMP/log";
    my $s = $Set->create($d);
    $s->add(prefix => 'gh:', dictionary => $dict[0], level => 3, id => 51);
    $s->write;
    $now = $t0 + 100;
    $s = $Set->read($d);
    $s->add(prefix => 'gh:', dictionary => $dict[1], level => 3, id => 52);
    $s->add(prefix => 'gh:', dictionary => $dict[3], level => 3, id => 53, stage => $HOUR);
    $s->write;
    my $text = do { local (@ARGV, $/) = "$d/manifest"; <> };
    like $text, qr/^set id=\S+ created=\S+ decisions=1,train,$t0,$t0,51,gh:;2,train,\d+,\d+,52,gh:;3,train,\d+,\d+,53,gh: decisions_of=[0-9a-f]{16}$/m,
        'the manifest: the decisions on the set line';
    my @moments = ($t0 + 50, $t0 + 150, $t0 + 100 + $HOUR + 2);
    my @want = map { my $at = $_; states($Set->read($d), at => $at) } @moments;
    is $Set->read($d)->synthesized, 0, 'read back: its own log';

    # Written before sets recorded decisions: the log is synthesized from
    # the entries, and written on the next write, nothing lost.
    (my $old = $text) =~ s/ decisions=\S+ decisions_of=\S+$//m;
    open my $fh, '>', "$d/manifest" or die $!;
    print {$fh} $old;
    close $fh;
    $s = $Set->read($d);
    is $s->synthesized, 'converted', 'a set without a log: its decisions synthesized from the entries';
    is_deeply [ map { states($s, at => $_) } @moments ], \@want, '... the same states at every moment';
    is_deeply [ map { "$_->{kind} $_->{id}" } $s->history ], [ 'train 51', 'train 52', 'train 53' ],
        '... one decision for each dictionary';
    is id_of($s->previous('gh:')), 51, '... and the one used before is known';
    $s->write;
    $s = $Set->read($d);
    is $s->synthesized, 0, 'written: the log is in the manifest';
    is_deeply [ map { states($s, at => $_) } @moments ], \@want, '... and nothing changed';

    # Release 0.101 changes the entries (a dictionary added at once): the
    # log no longer describes them, and the entries win.
    $now = time;
    my $fixture = CMRXFixture::DictionarySet0101->read($d);
    $fixture->add(prefix => 'gh:', dictionary => $dict[2], level => 3, id => 54);
    $fixture->write;
    $s = $Set->read($d);
    is $s->synthesized, 'rewritten', 'a set 0.101 changed: its decisions synthesized again from the entries';
    is id_of($s->current('gh:', at => time)), 54, '... writers use what 0.101 added';
    is id_of($s->current('gh:', at => $t0 + 100 + $HOUR + 2)), 54, '... also after the time of what was staged, '
        . 'which 0.101 cancelled';
    is id_of(CMRXFixture::DictionarySet0101->read($d)->current('gh:', at => $t0 + 100 + $HOUR + 2)), 54,
        '... as 0.101 itself reads it';
    is id_of($s->previous('gh:', at => time)), 52, '... and what writers used before is the one 0.101 retired';
}

done_testing;
