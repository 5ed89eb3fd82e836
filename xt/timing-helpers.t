#!/usr/bin/perl
# t/00-helpers.t with its wall-clock assertions on: the fake server's
# sleep and hold steps last at least the time the script asks for.
# Every case of that file runs again, asserting its results as in t/ and
# now also its bounds on elapsed time (CMRXTest::Timing). After make:
#   prove -b xt/timing-helpers.t
use strict;
use warnings;

$ENV{CMRX_TIMING_TESTS} = 1;
my $file = './t/00-helpers.t';
do $file or die $@ || "cannot run $file: $!";
