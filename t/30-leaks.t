#!/usr/bin/perl
# Memory leaks in the XS layer and the Rust engine: every entry point, on
# good and on bad input (CMRXTest::LeakOps), gives the right result, and
# Test::LeakTrace finds no Perl SV leaked around each operation.
#
# Test::LeakTrace sees a single leaked Perl SV but nothing allocated by Rust
# or malloc'd by the shim. xt/leak-soak.t complements it: it repeats the
# same operations 100 000 times (CMRX_LEAK_CYCLES) while the process RSS is
# watched, which sees any allocator memory (Rust's Box/Vec, Safefree'd
# buffers, libdeflate state) once it adds up over many cycles.
use strict;
use warnings;

use lib 't/lib';
use Test::More;

use CMRXTest::LeakOps qw(leak_ops);

my %OPS   = %{ leak_ops() };
my @NAMES = sort keys %OPS;

# ---- every operation gives the right answer (else the leak test is moot) -------

for my $name (@NAMES) {
    ok $OPS{$name}->(), "$name: correct result";
}

# ---- Test::LeakTrace: no SV leaked by any operation --------------------------------

SKIP: {
    skip 'Test::LeakTrace not installed', scalar @NAMES
        unless eval { require Test::LeakTrace; Test::LeakTrace->import; 1 };
    for my $name (@NAMES) {
        my $op = $OPS{$name};
        # The block runs a few times: once to warm caches, then traced.
        Test::LeakTrace::no_leaks_ok(sub { $op->() for 1 .. 3 },
                                     "$name: no SV leaked (Test::LeakTrace)");
    }
}

done_testing;
