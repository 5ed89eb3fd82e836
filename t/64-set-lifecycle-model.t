#!/usr/bin/perl
# A dictionary set's lifecycle against the documented rule ("The newest
# decision holds"): seeded random sequences of train --all, rollback,
# prune, history, the clock moving (or not), a command with a clock behind
# the log, a damaged manifest and a set shipped to a host, run through cmrx-dict (its
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
    # Several decisions in one second, then prune, history and a clock
    # behind the log.
    [ 'several decisions in one second',
      { op => 'train', stage => 0, outcomes => [ 0.1, 0.1, 0.1 ] },
      { op => 'train', stage => 0, outcomes => [ 0.1, 0.1, 0.1 ] },
      { op => 'train', stage => 7, outcomes => [ 0.1, 0.1, 0.1 ] },
      { op => 'rollback', prefix => 1, bare => 1, stage => undef, to => undef, dry_run => 0, lose => 0, via => 'main' },
      { op => 'rollback', prefix => 1, bare => 1, stage => undef, to => undef, dry_run => 0, lose => 0, via => 'main' },
      { op => 'history', prefix => 1, bare => 1, via => 'bin' },
      { op => 'prune', retired_for => 0, names => 5, dry_run => 0, via => 'bin' },
      { op => 'clock_back', seconds => 1, command => 'rollback', via => 'bin' },
      { op => 'clock_back', seconds => 30, command => 'prune', via => 'main' },
      { op => 'clock_back', seconds => 2, command => 'train', via => 'main' } ],
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
    # Every check of the log, each refusing a damaged manifest with the
    # line named; the file left as it was.
    [ 'a damaged manifest is refused, naming the line and the check',
      { op => 'train', stage => 0, outcomes => [ 0.1, 0.1, 0.1 ] },
      { op => 'clock', seconds => 5, offset => 0 },
      { op => 'train', stage => 30, outcomes => [ 0.1, 0.1, 0.1 ] },
      (map { +{ op => 'damage', check => $_, via => $_ % 2 ? 'bin' : 'main' } } 0 .. 5),
      { op => 'clock', seconds => 'next', offset => 1 },
      { op => 'prune', retired_for => 0, names => 0, dry_run => 0, via => 'main' },
      (map { +{ op => 'damage', check => $_, via => 'main' } } 0 .. 5) ],
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
             'train --all refused: dictionaries without a manifest',
             (map { "refused: a clock behind the log ($_)" } qw(rollback prune train)),
             (map { "refused: a manifest damaged ($_)" } 'effective before made', 'a missing dictionary',
                  "another prefix's dictionary", 'a seq repeated', 'time going back',
                  'the removal of a dictionary in use'));
my @missed = grep { !$CMRXTest::Lifecycle::SEEN{$_} } @cases;
ok !@missed, 'the sequences reached every case of the rule' or diag "not reached: @missed";
note map { "$_: $CMRXTest::Lifecycle::SEEN{$_}\n" } sort keys %CMRXTest::Lifecycle::SEEN;

done_testing;
