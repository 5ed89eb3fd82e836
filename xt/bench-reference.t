#!/usr/bin/perl
# bench/README.md shows the reference run as `perl -Mblib bench/run.pl
# --check --report doc/benchmark.json` prints it "with today's bars": the
# recorded run (doc/benchmark.json) judged by the bars bench/run.pl holds
# now. A bar moved in bench/run.pl and not in that block (or the block
# edited by hand) fails here, naming the first line that differs. The
# check is first shown a block with one bar changed.
use strict;
use warnings;

use lib 't/lib';
use Test::More;
use CMRXTest::Peers qw(slurp);

my $README = 'bench/README.md';
my $RUN    = 'doc/benchmark.json';

# The fenced block of $markdown that starts with the benchmark's title
# line, without its fences.
sub reference_block {
    my ($markdown) = @_;
    return $markdown =~ /^```\n(Cache-Memcached-RustXS benchmark .*?)^```$/ms ? $1 : undef;
}

# The first line where $shown and $printed differ, as a message; undef when
# they are the same text.
sub first_difference {
    my ($shown, $printed) = @_;
    my @a = split /\n/, $shown, -1;
    my @b = split /\n/, $printed, -1;
    for my $i (0 .. ($#a > $#b ? $#a : $#b)) {
        my ($x, $y) = ($a[$i] // '(nothing)', $b[$i] // '(nothing)');
        return "line " . ($i + 1) . " of the block: it shows\n  $x\nwhere bench/run.pl prints\n  $y"
            if $x ne $y;
    }
    return undef;
}

my $planted = "Cache-Memcached-RustXS benchmark  T\n  memGzip JSON 9 KB  1.89×  ≥1.3× ✓\n";
(my $moved = $planted) =~ s/≥1\.3×/≥1.5×/;
like first_difference($moved, $planted), qr/\Aline 2 of the block: .*≥1\.5×.*≥1\.3×/s,
    'a planted block with one bar changed: the line is found';
is first_difference($planted, $planted), undef, '... and the same block passes';
is reference_block("text\n```\n${planted}```\nmore\n"), $planted, '... the block is found in Markdown';

SKIP: {
    skip 'no blib: run make first', 2 unless -d 'blib/arch';
    skip 'JSON::PP is needed to read the recorded run', 2 unless eval { require JSON::PP; 1 };
    my $shown = reference_block(slurp($README));
    ok defined $shown, "$README shows the reference run in a fenced block";
    my $printed = `"$^X" -Mblib bench/run.pl --check --report $RUN 2>&1`;
    is first_difference($shown // '', $printed), undef,
        "${README}'s reference run is what bench/run.pl --check --report $RUN prints"
        or diag "exit status $?";
}

done_testing;
