#!/usr/bin/perl
# The leak soak: every operation of CMRXTest::LeakOps (each entry point of
# the XS layer and the Rust engine, on good and on bad input) run
# CMRX_LEAK_CYCLES times (default 100 000, about 15 s) while the process
# RSS is watched, each time checking its result.
#
# It sees any allocator memory (Rust's Box/Vec, Safefree'd buffers,
# libdeflate state) once it adds up over many cycles; t/30-leaks.t's
# Test::LeakTrace sees a single leaked Perl SV but nothing below Perl.
# After make:
#   prove -b xt/leak-soak.t
use strict;
use warnings;

use lib 't/lib';
use Time::HiRes qw(time);
use Test::More;

use CMRXTest::LeakOps qw(leak_ops);

my $CYCLES = $ENV{CMRX_LEAK_CYCLES} // 100_000;
$CYCLES = 100_000 unless $CYCLES =~ /\A[1-9][0-9]*\z/;

my %OPS   = %{ leak_ops() };
my @NAMES = sort keys %OPS;

# ---- RSS over many cycles ---------------------------------------------------------------

sub rss_kb {
    if (open my $fh, '<', '/proc/self/status') {
        while (<$fh>) { return $1 if /^VmRSS:\s+(\d+)\s+kB/ }
    }
    if (open my $fh, '<', '/proc/self/statm') {
        my (undef, $pages) = split ' ', scalar <$fh>;
        return $pages * 4 if defined $pages;    # 4 KiB pages
    }
    return undef;
}

SKIP: {
    skip 'no /proc/self/status or /proc/self/statm: cannot measure RSS', 2
        unless defined rss_kb();

    # The big socket value costs ~1 ms a time; every 10th cycle is plenty.
    my @every = grep { $_ ne 'sock_big' } @NAMES;
    my $warmup = int($CYCLES / 10) || 1;
    my ($failed, $rss_warm, %bad) = (0);
    my $t0 = time;
    for my $i (1 .. $CYCLES) {
        for my $name (@every) {
            next if $OPS{$name}->();
            $failed++;
            $bad{$name}++;
        }
        if ($i % 10 == 0 && !$OPS{sock_big}->()) { $failed++; $bad{sock_big}++ }
        $rss_warm = rss_kb() if $i == $warmup;
    }
    my $rss_end = rss_kb();
    my $growth  = $rss_end - $rss_warm;
    my $secs    = time - $t0;

    is $failed, 0, "$CYCLES cycles of " . scalar(@NAMES)
        . ' operations: every result right'
        or diag explain \%bad;
    # Tolerance 4 MB. After the warm-up every buffer, arena and cache has
    # its working size; what still moves is allocator noise: glibc malloc
    # trims and re-grows the heap top, fragmentation can strand a page
    # here and there, and Perl's SV arenas grow in 4 KB steps. That stays
    # well under 1 MB in practice. A real leak of even one 100-byte string
    # per cycle is 9 MB over the 90 000 measured cycles (and any leaked
    # Perl SV, however small, is caught by Test::LeakTrace in t/30-leaks.t).
    my $tolerance_kb = 4 * 1024;
    cmp_ok $growth, '<', $tolerance_kb,
        sprintf('RSS growth after warm-up %d kB (%d -> %d kB) < %d kB',
                $growth, $rss_warm, $rss_end, $tolerance_kb);
    diag sprintf 'RSS: %d kB after %d warm-up cycles, %d kB after %d '
        . '(%+d kB); %.1f s', $rss_warm, $warmup, $rss_end, $CYCLES,
        $growth, $secs;
}

done_testing;
