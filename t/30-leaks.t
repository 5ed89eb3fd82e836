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

use CMRXTest::LeakCheck qw(no_leaks);
use CMRXTest::LeakOps qw(leak_ops);

my %OPS   = %{ leak_ops() };
my @NAMES = sort keys %OPS;

# ---- every operation gives the right answer (else the leak test is moot) -------

for my $name (@NAMES) {
    ok $OPS{$name}->(), "$name: correct result";
}

# ---- Test::LeakTrace: no SV leaked by any operation --------------------------------

for my $name (@NAMES) {
    no_leaks("$name: no SV leaked (Test::LeakTrace)", $OPS{$name});
}

done_testing;
