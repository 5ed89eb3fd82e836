#!/usr/bin/perl
# Each helper has one home: the tests' own in t/lib (CMRXTest::), the
# benchmark's own in bench/lib (CMRXBench::), and what both use in dev/lib
# (CMRXDev::: the memcached servers, the corpus reader). The code of the
# tests never loads the benchmark's helpers, the benchmark's never the
# tests', and dev/lib's neither.
use strict;
use warnings;
use Test::More;
use File::Find ();

# The code of a Perl file: without its POD, comments and __END__ part.
sub code_of {
    my ($file) = @_;
    open my $fh, '<', $file or die "$file: $!";
    my ($code, $in_pod) = ('', 0);
    while (my $line = <$fh>) {
        last if $line =~ /^__(?:END|DATA)__\b/;
        if ($line =~ /^=(\w+)/) { $in_pod = $1 ne 'cut'; next }
        next if $in_pod;
        $line =~ s/(?:^|\s)#.*//;
        $code .= $line;
    }
    return $code;
}

sub perl_files {
    my (@dirs) = @_;
    my @files;
    File::Find::find({ no_chdir => 1, wanted => sub {
        return unless -f $_;
        return push @files, $_ if /\.(?:pm|pl|t)\z/;
        open my $fh, '<', $_ or return;
        my $first = <$fh>;
        push @files, $_ if defined $first && $first =~ /\A#!.*perl/;
    } }, grep { -d } @dirs);
    return sort @files;
}

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
