#!/usr/bin/perl
# MANIFEST lists exactly the files git tracks, less those MANIFEST.SKIP
# leaves out: nothing is forgotten from the tarball, nothing listed is gone.
use strict;
use warnings;

use ExtUtils::Manifest ();
use Test::More;

plan skip_all => 'not a git checkout' unless -e '.git';    # a file in a worktree

my @tracked = `git ls-files`;
plan skip_all => 'git is not available' if $?;
chomp @tracked;
my $skip = ExtUtils::Manifest::maniskip();
my %want = map { ($_ => 1) } grep { !$skip->($_) } @tracked;
my %listed = %{ ExtUtils::Manifest::maniread() };

is_deeply [ sort grep { !exists $listed{$_} } keys %want ], [], 'every tracked file is in MANIFEST';
is_deeply [ sort grep { !$want{$_} } keys %listed ], [], 'MANIFEST lists no file git does not track';

done_testing;
