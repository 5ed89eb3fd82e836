#!/usr/bin/perl
# Every SYNOPSIS that uses no client (the engine's modules and cmrx-dict's)
# runs as written, against a real memcached
# started for the test in place of 127.0.0.1:11211, in a scratch directory
# that holds users.dict (a zstd dictionary trained on the user records the
# SYNOPSES store), without warnings, and does what its comments say
# (CMRXTest::Synopsis). t/05 runs those that use one.
use strict;
use warnings;
use lib 't/lib';
use Test::More;
use CMRXTest::Memcached;
use CMRXTest::Synopsis qw(check_synopses);

my $server = CMRXTest::Memcached->start_or_skip;
check_synopses(addr => $server->address, clients => 0);

done_testing;
