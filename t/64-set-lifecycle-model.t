#!/usr/bin/perl
# A dictionary set's lifecycle against the documented rule ("The newest
# decision holds"): seeded random sequences of train --all, rollback,
# prune, history, the clock moving (or not), a manifest rewritten by
# release 0.101 and a set shipped to a host, run through cmrx-dict (its
# main, and a share through bin/cmrx-dict) with an injected clock; after
# every step the outputs agree with a model of the rule written apart from
# the code (CMRXTest::Lifecycle). A failing sequence is printed with its
# seed and its shortest form. The clock is moved, never waited for.
# xt/set-lifecycle-model.t runs many more steps.
use strict;
use warnings;

use lib 't/lib', 'dev/lib';
use Test::More;
use CMRXTest::Lifecycle qw(check_sequences describe_ops run_sequence make_context);

my $SEED      = defined $ENV{CMRX_LIFECYCLE_SEED}      ? $ENV{CMRX_LIFECYCLE_SEED}      : 20261204;
my $SEQUENCES = defined $ENV{CMRX_LIFECYCLE_SEQUENCES} ? $ENV{CMRX_LIFECYCLE_SEQUENCES} : 12;
my $STEPS     = defined $ENV{CMRX_LIFECYCLE_STEPS}     ? $ENV{CMRX_LIFECYCLE_STEPS}     : 30;

my $context = make_context();
my %ctx = (dictionaries => $context->{dictionaries}, values => $context->{values},
           value_files => $context->{value_files});

# Sequences kept as they were found, or as the rule's cases: each must
# agree with the model after every step.
my @kept = (
    # A retrain staged an hour, ten seconds later one staged 60 s: after
    # every staged time, writers use the second.
    [ 'an older staged retrain never takes over from a newer one',
      { op => 'train', stage => 0, outcomes => [ 0.1, 0.9, 0.9 ] },
      { op => 'train', stage => 3600, outcomes => [ 0.1, 0.9, 0.9 ] },
      { op => 'clock', seconds => 10, offset => 0 },
      { op => 'train', stage => 60, outcomes => [ 0.1, 0.9, 0.9 ] },
      { op => 'clock', seconds => 'next', offset => 0 },
      { op => 'clock', seconds => 3600, offset => 0 } ],
    # A rollback staged an hour, then a retrain staged 60 s: the retrain holds.
    [ 'a staged rollback never undoes a newer retrain',
      { op => 'train', stage => 0, outcomes => [ 0.1, 0.9, 0.9 ] },
      { op => 'clock', seconds => 5, offset => 0 },
      { op => 'train', stage => 0, outcomes => [ 0.1, 0.9, 0.9 ] },
      { op => 'rollback', prefix => 0, bare => 1, stage => 3600, to => undef, dry_run => 0, lose => 0, via => 'bin' },
      { op => 'clock', seconds => 10, offset => 0 },
      { op => 'train', stage => 60, outcomes => [ 0.1, 0.9, 0.9 ] },
      { op => 'clock', seconds => 4000, offset => 0 } ],
    # A staged first dictionary cancelled: writers stay on the fallback;
    # then train --all into its dictionaries without the manifest refuses.
    [ 'a staged first dictionary can be cancelled',
      { op => 'train', stage => 3600, outcomes => [ 0.1, 0.1, 0.1 ] },
      { op => 'rollback', prefix => 0, bare => 0, stage => undef, to => undef, dry_run => 0, lose => 0, via => 'bin' },
      { op => 'rollback', prefix => 2, bare => 0, stage => undef, to => undef, dry_run => 0, lose => 0, via => 'main' },
      { op => 'clock', seconds => 4000, offset => 0 },
      { op => 'orphan', via => 'main' } ],
    # A rollback to a dictionary whose file is missing is refused.
    [ 'a rollback naming a missing file is refused',
      { op => 'train', stage => 0, outcomes => [ 0.1, 0.1, 0.1 ] },
      { op => 'clock', seconds => 1, offset => 0 },
      { op => 'train', stage => 0, outcomes => [ 0.1, 0.1, 0.1 ] },
      { op => 'rollback', prefix => 0, bare => 0, stage => undef, to => undef, dry_run => 0, lose => 1, via => 'bin' },
      { op => 'rollback', prefix => 0, bare => 1, stage => undef, to => undef, dry_run => 0, lose => 0, via => 'main' } ],
    # Several decisions in one second, then prune, history and 0.101.
    [ 'several decisions in one second',
      { op => 'train', stage => 0, outcomes => [ 0.1, 0.1, 0.1 ] },
      { op => 'train', stage => 0, outcomes => [ 0.1, 0.1, 0.1 ] },
      { op => 'train', stage => 7, outcomes => [ 0.1, 0.1, 0.1 ] },
      { op => 'rollback', prefix => 1, bare => 1, stage => undef, to => undef, dry_run => 0, lose => 0, via => 'main' },
      { op => 'rollback', prefix => 1, bare => 1, stage => undef, to => undef, dry_run => 0, lose => 0, via => 'main' },
      { op => 'history', prefix => 1, bare => 1, via => 'bin' },
      { op => 'prune', retired_for => 0, names => 5, dry_run => 0, via => 'bin' },
      { op => 'old_write' } ],
    # Retired dictionaries that sampled values still name stay.
    [ 'prune keeps what sampled values name',
      { op => 'train', stage => 0, outcomes => [ 0.1, 0.1, 0.1 ] },
      { op => 'clock', seconds => 1, offset => 0 },
      { op => 'train', stage => 0, outcomes => [ 0.1, 0.1, 0.1 ] },
      { op => 'clock', seconds => 60, offset => 0 },
      { op => 'prune', retired_for => 0, names => 1023, dry_run => 0, via => 'main' },
      { op => 'prune', retired_for => 0, names => 0, dry_run => 1, via => 'main' },
      { op => 'prune', retired_for => 0, names => 0, dry_run => 0, via => 'bin' } ],
    # Found by the longer run (seed 4257): a dictionary made current and
    # replaced in one second, then staged and cancelled in that second, was
    # retired then, not when writers first stopped using it.
    [ 'a dictionary retired in the second it was last current or staged',
      { op => 'train', outcomes => [ 0.59, 0.28, 0.16 ], stage => 0 },
      { op => 'train', outcomes => [ 0.52, 0.14, 0.23 ], stage => 0 },
      { op => 'train', outcomes => [ 0.77, 0.95, 0.22 ], stage => 16 },
      { op => 'clock', seconds => 'next', offset => 0 },
      (map { +{ op => 'rollback', prefix => 1, bare => 1, stage => $_, to => undef, dry_run => 0, lose => 0,
                via => 'main' } } undef, undef, 38, 34),
      { op => 'prune', retired_for => 5, names => 451, dry_run => 0, via => 'main' } ],
    # The whole-cache entry and --if-better with real tuning, through
    # bin/cmrx-dict; then what --retired-for keeps.
    [ 'train --all with real tuning, the whole-cache entry, --retired-for',
      { op => 'train_cli', stage => 0, if_better => 5, values => 0, prefix => undef, via => 'bin' },
      { op => 'clock', seconds => 3, offset => 0 },
      { op => 'train_cli', stage => 0, if_better => 0, values => 1, prefix => undef, via => 'main' },
      { op => 'rollback', prefix => 2, bare => 0, stage => 0, to => undef, dry_run => 1, lose => 0, via => 'main' },
      { op => 'rollback', prefix => 2, bare => 0, stage => undef, to => undef, dry_run => 0, lose => 0, via => 'bin' },
      { op => 'clock', seconds => 4, offset => 0 },
      { op => 'prune', retired_for => 40, names => 0, dry_run => 0, via => 'main' },
      { op => 'train_cli', stage => 'default', if_better => 60, values => 0, prefix => 'a', via => 'main' } ],
    # Found by the longer run (seed 777) when the 0.101 kept here was a
    # development version that changed entries as it wrote: two dictionaries of one
    # prefix made current in one second (a rollback, a retrain, a rollback
    # back), then release 0.101 rewrites the set. It changes no entry: the
    # set keeps its log, and the rolled-back-to dictionary stays in effect.
    [ 'a set rewritten by 0.101 keeps the dictionary in effect of a prefix decided twice in one second',
      { op => 'train', outcomes => [ 0.66, 0.68, 0.45 ], stage => 14 },
      { op => 'rollback', prefix => 1, bare => 1, stage => 0, to => 0.357, dry_run => 0, lose => 0, via => 'main' },
      { op => 'train', outcomes => [ 0.95, 0.10, 0.71 ], stage => 0 },
      { op => 'rollback', prefix => 1, bare => 1, stage => undef, to => undef, dry_run => 0, lose => 0, via => 'main' },
      { op => 'clock', seconds => 'next', offset => 1 },
      { op => 'old_write' } ],
    # Release 0.101 retrains prefixes (one with a decision staged, one
    # without, the whole cache) between this release's writes: each is the
    # newest decision, and 0.101 reads what it added.
    [ 'a prefix that 0.101 retrained writes with what 0.101 added',
      { op => 'train', stage => 30, outcomes => [ 0.1, 0.1, 0.1 ] },
      { op => 'old_retrain', prefix => 1 },
      { op => 'old_write' },
      { op => 'train', stage => 0, outcomes => [ 0.9, 0.1, 0.9 ] },
      { op => 'clock', seconds => 40, offset => 0 },
      { op => 'old_retrain', prefix => 2 },
      { op => 'ship' },
      { op => 'old_retrain', prefix => 0 },
      { op => 'rollback', prefix => 0, bare => 1, stage => undef, to => undef, dry_run => 0, lose => 0, via => 'bin' } ],
    # Found by the longer run (seed 80): the whole cache's first
    # dictionary, replaced, then a rollback to it staged and superseded by
    # a retrain in one second: retired since writers stopped using it, not
    # since its staged rollback was superseded.
    [ 'a dictionary writers used is retired since they stopped',
      { op => 'train', outcomes => [ 0.80, 0.01, 0.50 ], stage => 11 },
      { op => 'clock', offset => -1, seconds => 'next' },
      { op => 'clock', offset => 1, seconds => 9 },
      { op => 'train', outcomes => [ 0.57, 0.17, 0.11 ], stage => 28 },
      { op => 'train', outcomes => [ 0.42, 0.76, 0.10 ], stage => 0 },
      { op => 'clock', offset => -1, seconds => 'next' },
      { op => 'rollback', prefix => 2, bare => 0, stage => 34, to => undef, dry_run => 0, lose => 0, via => 'main' },
      { op => 'train', outcomes => [ 0.87, 0.07, 0.41 ], stage => 9 },
      { op => 'prune', retired_for => 5, names => 494, dry_run => 1, via => 'main' } ],
    # Release 0.101 retires a prefix's writer with nothing in its place:
    # writers go to the fallback, and a rollback goes back to the one
    # retired, at once (writers used it).
    [ 'a writer that 0.101 retired is what a rollback goes back to',
      { op => 'train', stage => 0, outcomes => [ 0.1, 0.1, 0.1 ] },
      { op => 'clock', seconds => 5, offset => 0 },
      { op => 'train', stage => 0, outcomes => [ 0.1, 0.9, 0.1 ] },
      { op => 'old_retire', prefix => 0 },
      { op => 'old_retire', prefix => 2 },
      { op => 'rollback', prefix => 0, bare => 1, stage => undef, to => undef, dry_run => 0, lose => 0, via => 'main' },
      { op => 'old_retire', prefix => 1 },
      { op => 'old_retrain', prefix => 0 },
      { op => 'ship' },
      { op => 'rollback', prefix => 2, bare => 0, stage => undef, to => undef, dry_run => 0, lose => 0, via => 'bin' },
      { op => 'rollback', prefix => 1, bare => 1, stage => 0, to => undef, dry_run => 0, lose => 0, via => 'main' } ],
    # Release 0.101 retrains a prefix: its train is made at the trained
    # date it stamps, the same at every read (not at each read's time).
    [ "0.101's retrain keeps the same time at later reads",
      { op => 'train', stage => 0, outcomes => [ 0.34, 0.67, 0.28 ] },
      { op => 'old_retrain', prefix => 1 },
      { op => 'clock', seconds => 'next', offset => 1 } ],
    # A retrain staged 30 s, superseded by 0.101's retrain: once its time
    # has passed it still never took effect, so a bare rollback goes back
    # to what writers used, not to it.
    [ "a rollback after 0.101's retrain goes back to what writers used",
      { op => 'train', stage => 0, outcomes => [ 0.1, 0.9, 0.9 ] },
      { op => 'train', stage => 30, outcomes => [ 0.1, 0.9, 0.9 ] },
      { op => 'old_retrain', prefix => 0 },
      { op => 'clock', seconds => 40, offset => 0 },
      { op => 'rollback', prefix => 0, bare => 1, stage => undef, to => undef, dry_run => 0, lose => 0, via => 'main' } ],
);
for my $case (@kept) {
    my ($name, @ops) = @$case;
    my $failed = run_sequence(\@ops, %ctx);
    ok !$failed, $name or diag "step $failed->{step}: $failed->{why}\n" . describe_ops(\@ops);
}

my $failure = check_sequences(seed => $SEED, sequences => $SEQUENCES, steps => $STEPS, context => $context);
ok !$failure, "$SEQUENCES random sequences of $STEPS steps from seed $SEED agree with the model after every step"
    or diag "seed $failure->{seed} (CMRX_LIFECYCLE_SEED=$failure->{seed} CMRX_LIFECYCLE_SEQUENCES=1), step "
          . "$failure->{step}: $failure->{why}\nshortest sequence that fails ("
          . scalar(@{ $failure->{shortest} }) . " steps: $failure->{shortest_why}):\n"
          . describe_ops($failure->{shortest});

# The sequences went through every case of the rule.
my @cases = ('a decision in the second of the one before', 'a decision superseding a pending one',
             'rollback: cancel', 'rollback: at once', 'rollback: staged', 'rollback refused: file missing',
             'prune: removed', 'prune: kept, named by a sampled value', 'prune: kept, retired too recently',
             'train --all refused: dictionaries without a manifest', '0.101 rewrote the set',
             '0.101 retrained a prefix', '0.101 retired a writer');
my @missed = grep { !$CMRXTest::Lifecycle::SEEN{$_} } @cases;
ok !@missed, 'the sequences reached every case of the rule' or diag "not reached: @missed";
note map { "$_: $CMRXTest::Lifecycle::SEEN{$_}\n" } sort keys %CMRXTest::Lifecycle::SEEN;

done_testing;
