#!/usr/bin/perl
# Every SYNOPSIS that uses a client (Cache::Memcached, Cache::Memcached::Fast,
# or what wraps or inspects them) runs as written, against a real memcached
# started for the test in place of 127.0.0.1:11211, in a scratch directory
# that holds users.dict (a zstd dictionary trained on the user records the
# SYNOPSES store), without warnings, and does what its comments say
# (CMRXTest::Synopsis). t/04 runs the others.
use strict;
use warnings;
use lib 't/lib';
use Test::More;
use CMRXTest::Memcached;
use CMRXTest::Synopsis qw(check_synopses);

my $server = CMRXTest::Memcached->start_or_skip;
check_synopses(addr => $server->address, clients => 1);

done_testing;
