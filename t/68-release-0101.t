#!/usr/bin/perl
# Sets shared with release 0.101 as it shipped (t/data/v0101, which reads
# only each dictionary's `state` and keeps every field it does not know):
# what 0.101 makes of a set this release wrote (the writer at the moment
# of the write, a pending decision not taken up), and what this release
# makes of a set 0.101 changed afterwards (a retrain, a retirement, a
# dictionary removed, another prefix changed): writers follow what 0.101
# did, made at times the set gives (the same at every read), and nothing
# is lost.
use strict;
use warnings;

use lib 't/lib', 'dev/lib';
use Test::More;
use File::Temp ();
use Cache::Memcached::RustXS::Zstd qw(train_dictionary);
use Cache::Memcached::RustXS::Zstd::DictionarySet;
use CMRXDev::Corpus qw(corpus_values);
use CMRXTest::DictSets qw(run_dict);

require './t/data/v0101/DictionarySet0101.pm';

my $Set  = 'Cache::Memcached::RustXS::Zstd::DictionarySet';
my $Old  = 'CMRXFixture::DictionarySet0101';
my $TMP  = File::Temp->newdir;
my $HOUR = 3600;

my $corpus = corpus_values('bench/data/values');
my @gh  = map { $_->[1] } @{ $corpus->{gh} };
my @npm = map { $_->[1] } @{ $corpus->{npm} };
my @dict = map { train_dictionary($_, size => 4096) }
           [ @gh[0 .. 39] ], [ @gh[40 .. 79] ], [ reverse @gh[0 .. 39] ], [ @npm[0 .. 39] ], [ @npm[40 .. 79] ];

# One clock for both releases: each reads its own hook.
my $t0  = 2_000_000_000;
my $now = $t0;
local $Cache::Memcached::RustXS::Zstd::DictionarySet::State::Clock = sub { $now };
no warnings 'once';
local $CMRXFixture::DictionarySet0101::Clock = sub { $now };
use warnings 'once';

sub id_of { my ($e) = @_; $e ? $e->{id} : undef }
sub kinds { my ($set, $prefix) = @_; join ' ', map { "$_->{kind}:" . (defined $_->{id} ? $_->{id} : '-') } $set->history(prefix => $prefix) }
sub fields {
    my ($set) = @_;
    return { map { my $e = $_; ($e->{id} => { map { defined $e->{$_} ? ($_ => $e->{$_}) : () } keys %$e }) } $set->entries };
}

# This release: gh: on 1, then 2 at once; npm: on 4 with 5 staged an hour.
sub new_set {
    my ($name) = @_;
    my $d = "$TMP/$name";
    $now = $t0;
    my $s = $Set->create($d);
    $s->add(prefix => 'gh:', dictionary => $dict[0], level => 3, id => 1);
    $s->add(prefix => 'npm:', dictionary => $dict[3], level => 3, id => 4);
    $s->write;
    $now = $t0 + 100;
    $s = $Set->read($d);
    $s->add(prefix => 'gh:', dictionary => $dict[1], level => 3, id => 2);
    $s->add(prefix => 'npm:', dictionary => $dict[4], level => 3, id => 5, stage => $HOUR);
    $s->write;
    return $d;
}
my $npm_due = $t0 + 100 + $HOUR + 1;    # staged from the write, and one second for the command

# ---- what 0.101 reads of a set this release wrote --------------------------------

{
    my $d = new_set('reads');
    my $old = $Old->read($d);
    is id_of($old->current('gh:')), 2, '0.101 reads the writer of a prefix: the one current at the write';
    is id_of($old->current('npm:')), 4, '... and of a prefix with a staged decision: the one writers use now';
    is_deeply [ sort map { $_->{id} } $old->entries ], [ 1, 2, 4, 5 ],
        '... every dictionary listed (its readers load them all)';
    $now = $npm_due + 10;
    is id_of($Set->read($d)->current('npm:')), 5, 'after the staged time this release uses the staged one';
    is id_of($Old->read($d)->current('npm:')), 4,
        '... but 0.101 does not: it reads state only, until this release writes the set again';
    $Set->read($d)->write;
    is id_of($Old->read($d)->current('npm:')), 5, 'written after the staged time: 0.101 uses it too';

    # A staged first dictionary: 0.101 sees no dictionary for the prefix.
    $now = $npm_due + 20;
    my $s = $Set->read($d);
    $s->add(prefix => 'user:', dictionary => $dict[2], level => 3, id => 7, stage => $HOUR);
    $s->write;
    is id_of($Old->read($d)->current('user:')), undef, 'a staged first dictionary: 0.101 uses the fallback';
    is id_of($Old->read($d)->for_key('user:1')), undef, '... for its keys';
}

# ---- 0.101 retrains a prefix this release wrote -----------------------------------

{
    my $d = new_set('retrain');
    $now = $t0 + 200;
    my $old = $Old->read($d);
    $old->add(prefix => 'gh:', dictionary => $dict[2], level => 3, id => 3);
    $old->add(prefix => 'npm:', dictionary => $dict[2], level => 3, id => 6);
    $old->write;
    my $e2 = $Old->read($d)->entry(2);
    is_deeply [ @$e2{qw(state decided)}, defined $e2->{current_from} ? 1 : 0, defined $e2->{retired} ? 1 : 0 ],
        [ 'retired', 'current', 1, 0 ],
        '0.101 retires the one it replaces: current_from kept, no retired date (as a staged one reads)';

    $now = $t0 + 300;
    my $s = $Set->read($d);
    is $s->synthesized, 'reconciled', 'this release reads the set 0.101 changed: its changes follow the log';
    is id_of($s->current('gh:')), 3, '... writers use the dictionary 0.101 trained';
    is id_of($s->current('gh:', at => $t0 + 10 * $HOUR)), 3, '... also long after';
    is id_of($s->previous('gh:')), 2, '... and what they used before is the one 0.101 retired';
    is id_of($s->current('npm:')), 6, 'the prefix with a staged decision: writers use what 0.101 trained';
    is id_of($s->current('npm:', at => $npm_due + 10)), 6, '... also after the staged time: 0.101 superseded it';
    is kinds($s, 'gh:'), 'train:1 train:2 train:3', 'history of gh: ... the train 0.101 made is the last';
    my ($last) = reverse $s->history(prefix => 'gh:');
    is_deeply [ @$last{qw(made effective)} ], [ $t0 + 200, $t0 + 200 ],
        '... made, effective at once, at the trained date 0.101 stamped (the time it wrote is not recorded)';
    {
        my $first_read = $now;
        $now = $npm_due + 10;
        my $later = $Set->read($d);
        my ($again) = reverse $later->history(prefix => 'gh:');
        is_deeply [ @$again{qw(made effective)} ], [ $t0 + 200, $t0 + 200 ], '... the same at a later read';
        is id_of($later->previous('gh:')), 2, '... where what writers used before is still the one 0.101 retired';
        my ($late5) = grep { defined $_->{id} && $_->{id} == 5 } $later->history(prefix => 'npm:');
        is $late5->{status}, 'superseded', '... and the staged npm: decision, its time passed, still superseded';
        $now = $first_read;
    }
    {
        local $ENV{CMRX_DICT_NOW} = $now;
        my ($status, $out, $err) = run_dict([ 'history', '--dictionaries', $d, '--prefix', 'gh:' ]);
        is $status, 0, 'cmrx-dict history of the set 0.101 changed: exit 0' or diag $err;
        like $out, qr/changed the set after its decisions were recorded: its changes are the last decisions/,
            '... it says the last decisions are 0.101\'s' or diag $out;
    }
    my ($staged) = grep { defined $_->{id} && $_->{id} == 5 } $s->history(prefix => 'npm:');
    is $staged->{status}, 'superseded', '... the staged npm: decision superseded';
    is_deeply [ sort map { $_->{id} } $s->entries ], [ 1 .. 6 ], 'readers still load every dictionary';

    $s->write;
    $now = $npm_due + 10;
    $s = $Set->read($d);
    is $s->synthesized, 0, 'written: its log holds the reconciled decisions';
    is_deeply [ map { id_of($s->current($_)) } 'gh:', 'npm:' ], [ 3, 6 ], '... read back: the same writers';
    my $old2 = $Old->read($d);
    is_deeply [ map { id_of($old2->current($_)) } 'gh:', 'npm:' ], [ 3, 6 ], '... as 0.101 reads them too';
    is $old2->entry(5)->{state}, 'retired', '... and the superseded staged one retired';
}

# Lines that do not say what was written (no decided: a development
# version's set): the decisions are synthesized from the entries, and
# writers still follow 0.101's retrain.
{
    my $d = new_set('undecided');
    my $text = do { local (@ARGV, $/) = "$d/manifest"; <> };
    $text =~ s/ decided=\S+//g;
    open my $fh, '>', "$d/manifest" or die "$d/manifest: $!";
    print {$fh} $text;
    close $fh;
    $now = $t0 + 200;
    my $old = $Old->read($d);
    $old->add(prefix => 'gh:', dictionary => $dict[2], level => 3, id => 3);
    $old->add(prefix => 'npm:', dictionary => $dict[2], level => 3, id => 6);
    $old->write;
    $now = $t0 + 300;
    my $s = $Set->read($d);
    is $s->synthesized, 'rewritten', 'without decided: synthesized from the entries';
    is_deeply [ map { id_of($s->current($_)) } 'gh:', 'npm:' ], [ 3, 6 ], '... writers use what 0.101 trained';
    is_deeply [ map { id_of($s->current($_, at => $npm_due + 10)) } 'gh:', 'npm:' ], [ 3, 6 ],
        '... also after the staged time';
    is id_of($s->previous('gh:')), 2, '... and used the one 0.101 retired before';
}

# ---- 0.101 retires, removes, changes another prefix ------------------------------

{
    my $d = new_set('retire');
    $now = $t0 + 200;
    my $old = $Old->read($d);
    $old->retire(2);
    $old->remove(1);
    $old->write;
    $now = $t0 + 300;
    my $s = $Set->read($d);
    is $s->synthesized, 'reconciled', '0.101 retired gh:\'s writer and removed an old one: reconciled';
    is id_of($s->current('gh:')), undef, '... gh: writers use the fallback, as 0.101 left it';
    is kinds($s, 'gh:'), 'train:1 train:2 retire:2', '... a retirement, the last decision';
    my ($retire) = reverse $s->history(prefix => 'gh:');
    is_deeply [ @$retire{qw(made effective)} ], [ $t0 + 100, $t0 + 100 ],
        '... made, effective at once, at the time of the log\'s last decision (0.101 stamps no date on a retirement)';
    is id_of($s->current('npm:', at => $npm_due)), 5, '... and npm:, which 0.101 did not change, keeps its staged decision';
    is id_of($s->current('npm:', at => $npm_due - 1)), 4, '... from its time only';
    is_deeply [ map { $_->{id} } $s->removed ], [ 1 ], '... the dictionary it removed listed as removed';
}

# A staged decision took effect after the log's last decision, this
# release wrote the set after that (no decision: a plain write), then
# 0.101 retired that writer: the retirement is made no earlier than when
# the writer took effect, so writers used it before.
{
    my $d = new_set('retire-staged');
    $now = $npm_due + 10;
    $Set->read($d)->write;
    $now = $npm_due + 20;
    my $old = $Old->read($d);
    is id_of($old->current('npm:')), 5, 'written after the staged time: 0.101 reads the staged one as the writer';
    $old->retire(5);
    $old->write;
    $now = $npm_due + 30;
    my $s = $Set->read($d);
    my ($train5) = grep { $_->{kind} eq 'train' && $_->{id} == 5 } $s->history(prefix => 'npm:');
    my ($retire) = reverse $s->history(prefix => 'npm:');
    is "$retire->{kind}:$retire->{id}", 'retire:5', '0.101 retired it: the last decision';
    local $TODO = 'the retirement is made at the log\'s last decision, before the staged writer took effect';
    is $retire->{made}, $train5->{effective}, '... made when the writer it retired took effect';
    is id_of($s->current('npm:')), undef, '... writers use the fallback, as 0.101 left it';
    is id_of($s->previous('npm:')), 5, '... and used before the staged one that had taken effect';
    $now = $npm_due + 3 * $HOUR;
    is id_of($Set->read($d)->previous('npm:')), 5, '... the same at a later read';
}

# ---- a set 0.101 made -------------------------------------------------------------

{
    my $d = "$TMP/made-by-0101";
    $now = $t0;
    my $old = $Old->create($d);
    is $old->{set_fields}{created}, '2033-05-18T03:33:20Z', '0.101 reads the time from its own hook';
    ok !defined &CORE::GLOBAL::time, '... and time is overridden for no one';
    $old->add(prefix => 'gh:', dictionary => $dict[0], level => 3, id => 1);
    $old->write;
    $now = $t0 + 100;
    $old = $Old->read($d);
    $old->add(prefix => 'gh:', dictionary => $dict[1], level => 3, id => 2);
    $old->write;
    $now = $t0 + 150;
    $old = $Old->read($d);
    $old->add(prefix => 'gh:', dictionary => $dict[2], level => 3, id => 3);
    $old->write;
    $now = $t0 + 200;
    my $s = $Set->read($d);
    is $s->synthesized, 'converted', 'a set 0.101 made: its decisions synthesized from its entries';
    is_deeply [ id_of($s->current('gh:')), id_of($s->previous('gh:')) ], [ 3, 2 ],
        '... writers use its current one, and used the one it replaced before (retired without dates)';
    is kinds($s, 'gh:'), 'train:1 train:2 train:3 retire:1 retire:2', '... each replaced, then retired at a time not known';
    is_deeply [ map { $_->{since} } grep { $_->{state} eq 'retired' } $s->schedule ], [ undef, undef ],
        '... so their retirement dates stay unknown (prune counts from when it first sees them)';
    $s->write;
    is_deeply [ map { $_->{id} } grep { $_->{state} eq 'current' } $Old->read($d)->entries ], [ 3 ],
        'converted on the next write: 0.101 reads the same';
    is id_of($Set->read($d)->previous('gh:')), 2, '... and this release still knows what writers used before';

    # As an operator runs it: cmrx-dict's clock is CMRX_DICT_NOW.
    local $ENV{CMRX_DICT_NOW} = $now;
    my ($status, $out, $err) = run_dict([ 'rollback', '--dictionaries', $d, '--prefix', 'gh:' ]);
    is $status, 0, 'cmrx-dict rollback --prefix gh: on the set 0.101 made: exit 0' or diag $err;
    is_deeply [ id_of($Set->read($d)->current('gh:')), id_of($Old->read($d)->current('gh:')) ], [ 2, 2 ],
        '... back to the one 0.101 replaced, at once (writers used it), for both releases';
}

# ---- round trips lose nothing -----------------------------------------------------

{
    my $d = new_set('round');
    $now = $t0 + 200;
    my $before = fields($Set->read($d));
    my $log = $Set->read($d)->{set_fields}{decisions};
    my $old = $Old->read($d);
    $old->write;
    my $s = $Set->read($d);
    is $s->synthesized, 0, '0.101 rewrites a set without changing it: this release keeps its log';
    is $s->{set_fields}{decisions}, $log, '... the same decisions';
    is_deeply fields($s), $before, '... and every field of every dictionary';
    $s->write;
    $old = $Old->read($d);
    is_deeply fields($old), fields($Set->read($d)), 'written again: 0.101 reads every field this release wrote';
    is_deeply [ map { id_of($old->current($_)) } 'gh:', 'npm:' ], [ 2, 4 ], '... and the same writers';
}

done_testing;
