#!/usr/bin/perl
# t/32-hostile.t with its wall-clock assertions on: against hostile servers
# the client fails fast, waits for select_timeout only when the server is
# silent, and takes time linear in the number of values.
# Every case of that file runs again, asserting its results as in t/ and
# now also its bounds on elapsed time (CMRXTest::Timing). After make:
#   prove -b xt/timing-hostile.t
use strict;
use warnings;

$ENV{CMRX_TIMING_TESTS} = 1;
my $file = './t/32-hostile.t';
do $file or die $@ || "cannot run $file: $!";
