#!/usr/bin/perl
# The lifecycle of a dictionary set against the documented rule (t/64),
# many more steps: CMRX_LIFECYCLE_SEQUENCES sequences (24; 100 or more
# for a long run) of CMRX_LIFECYCLE_STEPS steps (60) from
# CMRX_LIFECYCLE_SEED (20261204 unless given, so that CI is repeatable;
# another seed walks other sequences), with more of them through
# bin/cmrx-dict and train --all's real tuning than t/64. A failure prints its seed and its
# shortest sequence; rerun with that seed and CMRX_LIFECYCLE_SEQUENCES=1.
use strict;
use warnings;

use lib 't/lib', 'dev/lib';
use Test::More;
use CMRXTest::Lifecycle qw(check_sequences describe_ops make_context);

my $SEED      = defined $ENV{CMRX_LIFECYCLE_SEED}      ? $ENV{CMRX_LIFECYCLE_SEED}      : 20261204;
my $SEQUENCES = defined $ENV{CMRX_LIFECYCLE_SEQUENCES} ? $ENV{CMRX_LIFECYCLE_SEQUENCES} : 24;
my $STEPS     = defined $ENV{CMRX_LIFECYCLE_STEPS}     ? $ENV{CMRX_LIFECYCLE_STEPS}     : 60;
diag "seed $SEED: $SEQUENCES sequences of $STEPS steps";

my $failure = check_sequences(seed => $SEED, sequences => $SEQUENCES, steps => $STEPS, context => make_context(),
                              mix => { bin_share => 0.2, cli_train_share => 0.05 });
ok !$failure, "$SEQUENCES random sequences of $STEPS steps from seed $SEED agree with the model after every step"
    or diag "seed $failure->{seed} (CMRX_LIFECYCLE_SEED=$failure->{seed} CMRX_LIFECYCLE_SEQUENCES=1), step "
          . "$failure->{step}: $failure->{why}\nshortest sequence that fails ("
          . scalar(@{ $failure->{shortest} }) . " steps: $failure->{shortest_why}):\n"
          . describe_ops($failure->{shortest});
diag map { "  $_: $CMRXTest::Lifecycle::SEEN{$_}\n" } sort keys %CMRXTest::Lifecycle::SEEN;

done_testing;
