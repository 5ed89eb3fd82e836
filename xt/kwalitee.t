#!/usr/bin/perl
# The tarball `make dist` builds passes every core and extra Kwalitee
# indicator of Module::CPANTS::Analyse (Debian: libmodule-cpants-analyse-
# perl), as CPANTS would grade it. Builds the tarball (run Makefile.PL
# first) and removes it after.
use strict;
use warnings;

use Test::More;

eval { require Module::CPANTS::Analyse; require Module::CPANTS::Kwalitee; 1 }
    or plan skip_all => 'Module::CPANTS::Analyse is not installed';
plan skip_all => 'no Makefile (run perl Makefile.PL first)' unless -f 'Makefile';

my $log = `make dist 2>&1`;
is $?, 0, 'make dist' or diag $log;
my ($tarball) = $log =~ /^Created (\S+\.tar\.gz)$/m;
ok $tarball && -f $tarball, 'a tarball: ' . ($tarball || 'none');

SKIP: {
    skip 'no tarball', 1 unless $tarball && -f $tarball;
    my $analysis = Module::CPANTS::Analyse->new({ dist => $tarball });
    $analysis->run;
    my $d = $analysis->d;
    my @indicators = grep { !$_->{is_experimental} } @{ Module::CPANTS::Kwalitee->new->get_indicators };
    cmp_ok scalar(@indicators), '>=', 25, scalar(@indicators) . ' core and extra indicators';
    for my $indicator (@indicators) {
        my $name = $indicator->{name};
        my $error = $d->{error}{$name};
        ok $d->{kwalitee}{$name}, ($indicator->{is_extra} ? 'extra' : 'core') . " $name"
            or diag $indicator->{remedy}, ($error ? "\n" . (ref $error ? join(', ', @$error) : $error) : '');
    }
    unlink $tarball;
}

done_testing;
