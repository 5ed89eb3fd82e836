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

# The set's clock stands still here: what it writes is compared with
# dates of $now, which a second ticking by would move.
my $now = int time;
local $Cache::Memcached::RustXS::Zstd::DictionarySet::State::Clock = sub { $now };
my $set = $Set->create("$TMP/schedule");
my $a = $set->add(prefix => 'gh:', dictionary => $dict[0], level => 3, id => 11);
is states($set)->{11}, 'current', 'added without current_from: current at once';
my $b = $set->add(prefix => 'gh:', dictionary => $dict[1], level => 6, id => 12,
                  current_from => $now + $HOUR);
is states($set)->{12}, 'staged', 'added with a later current_from: staged';
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
like $text, qr/^decision seq=2 kind=train prefix=gh: dictionary=12 made=\Q${\ date($now)}\E effective=\Q${\ date($now + $HOUR)}\E$/m,
    'the manifest: the staged decision, with when it takes effect';
unlike $text, qr/ state=/, '... and no state written on a dictionary line';
my $read = $Set->read("$TMP/schedule");
is_deeply states($read), { 11 => 'current', 12 => 'staged' }, 'read back: the same schedule';
is_deeply states($read, at => $now + $HOUR + 5), { 11 => 'retired', 12 => 'current' },
    '... and after its time, from the same lines';

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
my ($row23) = grep { $_->{entry}{id} == 23 } $roll->schedule;
is_deeply [ @$row23{qw(state since)} ], [ 'retired', date($now) ],
    'a superseded one is retired since the decision that set it aside (no longer staged)';
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

# A manifest's effective time must be a date.
(my $bad = $text) =~ s/effective=\S+/effective=tomorrow/;
mkdir "$TMP/bad";
open my $fh, '>', "$TMP/bad/manifest" or die $!;
print {$fh} $bad;
close $fh;
like error_of(sub { $Set->read("$TMP/bad") }), qr/line \d+: effective must be YYYY-MM-DDTHH:MM:SSZ/,
    'a malformed effective time: the manifest is refused, naming the line';

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

# ---- time only moves forward ------------------------------------------------------

{
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
    $s->write;
    my $text = do { local (@ARGV, $/) = "$d/manifest"; <> };
    $now = $t0 + 50;    # a host whose clock is behind the log
    $s = $Set->read($d);
    for my $case ([ add => sub { $s->add(prefix => 'gh:', dictionary => $dict[3], level => 3, id => 53) } ],
                  [ make_current => sub { $s->make_current(51) } ], [ retire => sub { $s->retire(52) } ],
                  [ remove => sub { $s->remove(51) } ]) {
        like error_of($case->[1]), qr/the clock says \Q${\ date($t0 + 50)}\E, earlier than the newest line of the set's log \(line \d+, \Q${\ date($t0 + 100)}\E\): time only moves forward: nothing was changed/,
            "$case->[0] with a clock behind the log: refused, naming both times";
    }
    is_deeply [ map { $_->{seq} } $s->history ], [ 1, 2 ], '... no decision was made';
    $s->write;
    is do { local (@ARGV, $/) = "$d/manifest"; <> }, $text, '... and the file is unchanged';
    $now = $t0 + 100;    # the same second as the newest line: fine
    $s->make_current(51);
    $s->write;
    is id_of($Set->read($d)->current('gh:')), 51, 'a clock at the newest line\'s time may decide';
}

done_testing;
