#!/usr/bin/perl
# Each helper has one home: the tests' own in t/lib (CMRXTest::), the
# benchmark's own in bench/lib (CMRXBench::), and what both use in dev/lib
# (CMRXDev::: the memcached servers, the corpus reader). The code of the
# tests never loads the benchmark's helpers, the benchmark's never the
# tests', and dev/lib's neither.
use strict;
use warnings;
use lib 't/lib';
use Test::More;
use CMRXTest::Source qw(code_of perl_files);

my %rules = (
    tests     => [ [qw(t xt)],  qr{\bCMRXBench::|\bbench/lib\b} ],
    benchmark => [ ['bench'],   qr{\bCMRXTest::|\bt/lib\b} ],
    dev       => [ ['dev/lib'], qr{\bCMRXTest::|\bCMRXBench::|\bt/lib\b|\bbench/lib\b} ],
);
for my $who (sort keys %rules) {
    my ($dirs, $foreign) = @{ $rules{$who} };
    my @files = perl_files(@$dirs);
    ok @files, "the $who: " . scalar(@files) . ' Perl files';
    my @offenders = grep { code_of($_) =~ $foreign } @files;
    is_deeply \@offenders, [], "the $who load no helper from another's home";
}

# The shared helpers are where both sides find them.
ok -f "dev/lib/CMRXDev/$_.pm", "dev/lib has CMRXDev::$_" for qw(Memcached ChildProcess Corpus);
like code_of('bench/run.pl'), qr{use lib .*dev/lib}, 'bench/run.pl takes dev/lib';

done_testing;
