#!/usr/bin/perl
# Every POD in the distribution is valid, and every public function of the
# modules is documented.
use strict;
use warnings;

use lib 't/lib';
use Test::More;
use CMRXTest::Modules qw(modules);

eval { require Test::Pod; Test::Pod->VERSION(1.22); 1 }
    or plan skip_all => 'Test::Pod 1.22 is not installed';
eval { require Test::Pod::Coverage; Test::Pod::Coverage->VERSION(1.08); 1 }
    or plan skip_all => 'Test::Pod::Coverage 1.08 is not installed';

my @pod = Test::Pod::all_pod_files(qw(lib bin script bench dev/lib t/lib));
ok @pod >= 3, scalar(@pod) . ' files with POD';
Test::Pod::pod_file_ok($_) for @pod;

# Every module MANIFEST lists. Pod::Coverage looks at the loaded package
# (run with -Mblib: the built modules and XS).
for my $module (modules()) {
  SKIP: {
        # A module that needs a client this host lacks cannot be loaded.
        unless (eval "require $module; 1") {
            my ($why) = split /\n/, $@;
            skip "$module does not load here: $why", 1
                if $why =~ m{\ACan't locate Cache/Memcached|Cache::Memcached version};
        }
        Test::Pod::Coverage::pod_coverage_ok($module, {
            # Perl's own hook, called by threads, not by users.
            also_private => [qr/\ACLONE\z/],
        }, "$module: every public function documented");
    }
}

done_testing;
