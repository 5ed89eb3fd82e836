#!/usr/bin/perl
# `make install` installs cmrx-dict's manual as its manual page (man1,
# what `man cmrx-dict` reads) and beside the modules (what `perldoc
# cmrx-dict` reads), and the command itself: installed into a scratch
# DESTDIR from the Makefile of this build (run Makefile.PL and make first).
use strict;
use warnings;

use File::Find ();
use File::Temp ();
use Test::More;

plan skip_all => 'no Makefile (run perl Makefile.PL && make first)' unless -f 'Makefile';

my $destdir = File::Temp->newdir;
my $log = `make install DESTDIR=$destdir 2>&1`;
is $?, 0, 'make install DESTDIR=... succeeds' or diag $log;

my %installed;
File::Find::find({ no_chdir => 1, wanted => sub {
    push @{ $installed{$1} }, $File::Find::name if m{/(man1/cmrx-dict\.[^/]+|cmrx-dict\.pod|bin/cmrx-dict)\z};
} }, "$destdir");
my ($page) = @{ $installed{ (grep { m{\Aman1/} } keys %installed)[0] || '' } || [] };
ok $page, 'a man1 page named cmrx-dict: ' . ($page || 'none');
ok $installed{'cmrx-dict.pod'}, 'cmrx-dict.pod beside the modules';
ok $installed{'bin/cmrx-dict'}, 'the command';

SKIP: {
    skip 'no man1 page', 3 unless $page;
    my $text = do { local (@ARGV, $/) = ($page); <> };
    like $text, qr/cmrx\\?-dict \\- what each key prefix of a live memcached/, 'the page is the manual (its NAME)';
    like $text, qr/^\.SH "?EXAMPLES"?/m, '... with its EXAMPLES';
    like $text, qr/rollback/, '... and the rollback subcommand';
}

done_testing;
