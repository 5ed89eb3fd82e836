#!/usr/bin/perl
# The XS needs no fallback that ppport.h would have to supply beyond what it
# asks for: `perl ppport.h --compat-version=5.010001` finds nothing to
# change and warns of nothing, so the XS stays buildable on the oldest perl
# the distribution supports.
use strict;
use warnings;

use Test::More;

my $FLOOR = '5.010001';
my @xs = glob 'perl/*.xs';
ok @xs, 'found the XS sources' or BAIL_OUT('run from the distribution folder');

for my $file (@xs) {
    my $report = `"$^X" perl/ppport.h --compat-version=$FLOOR --nochanges "$file" 2>&1`;
    is $?, 0, "$file: ppport.h ran";
    my @problems = grep { /WARNING|needs to be|Suggested changes|Needs / } split /\n/, $report;
    is_deeply \@problems, [], "$file: ppport.h --compat-version=$FLOOR has nothing to fix"
        or diag $report;
    like $report, qr/Looks good|Analysis completed/, "$file: ppport.h analysed it";
}

done_testing;
