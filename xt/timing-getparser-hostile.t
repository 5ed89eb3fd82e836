#!/usr/bin/perl
# t/12-getparser-hostile.t with its wall-clock assertions on: on a bad
# response the parser fails at once, well before select_timeout, while
# the pure-Perl parser (the control) waits for it.
# Every case of that file runs again, asserting its results as in t/ and
# now also its bounds on elapsed time (CMRXTest::Timing). After make:
#   prove -b xt/timing-getparser-hostile.t
use strict;
use warnings;

$ENV{CMRX_TIMING_TESTS} = 1;
my $file = './t/12-getparser-hostile.t';
do $file or die $@ || "cannot run $file: $!";
