#!/usr/bin/perl
# The model-checked lifecycle of a dictionary set (t/64), many more steps:
# CMRX_LIFECYCLE_SEQUENCES sequences (150) of CMRX_LIFECYCLE_STEPS steps
# (80) from CMRX_LIFECYCLE_SEED (the time, printed, unless given). A
# failure prints its seed and its shortest sequence; rerun with that seed
# and CMRX_LIFECYCLE_SEQUENCES=1.
use strict;
use warnings;

use lib 't/lib', 'dev/lib';
use Test::More;
use CMRXTest::Lifecycle qw(check_sequences describe_ops);
use Cache::Memcached::RustXS::Zstd qw(train_dictionary);
use CMRXDev::Corpus qw(corpus_values);

my $SEED      = defined $ENV{CMRX_LIFECYCLE_SEED}      ? $ENV{CMRX_LIFECYCLE_SEED}      : time;
my $SEQUENCES = defined $ENV{CMRX_LIFECYCLE_SEQUENCES} ? $ENV{CMRX_LIFECYCLE_SEQUENCES} : 150;
my $STEPS     = defined $ENV{CMRX_LIFECYCLE_STEPS}     ? $ENV{CMRX_LIFECYCLE_STEPS}     : 80;
diag "seed $SEED: $SEQUENCES sequences of $STEPS steps";

my $corpus = corpus_values('bench/data/values');
my @gh = map { $_->[1] } @{ $corpus->{gh} };
my @dictionaries = map { train_dictionary([ @gh[ 20 * $_ .. 20 * $_ + 19 ] ], size => 2048) } 0 .. 3;
my %values = ('a:' => $gh[-1], 'b:' => $gh[-2]);

my $failure = check_sequences(seed => $SEED, sequences => $SEQUENCES, steps => $STEPS,
                              dictionaries => \@dictionaries, values => \%values);
ok !$failure, "$SEQUENCES random sequences of $STEPS steps from seed $SEED agree with the model after every step"
    or diag "seed $failure->{seed} (CMRX_LIFECYCLE_SEED=$failure->{seed} CMRX_LIFECYCLE_SEQUENCES=1), step "
          . "$failure->{step}: $failure->{why}\nshortest sequence that fails ("
          . scalar(@{ $failure->{shortest} }) . " steps: $failure->{shortest_why}):\n"
          . describe_ops($failure->{shortest});

done_testing;
