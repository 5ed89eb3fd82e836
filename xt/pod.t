#!/usr/bin/perl
# Every POD in the distribution is valid, and every public function of the
# modules is documented.
use strict;
use warnings;

use Test::More;

eval { require Test::Pod; Test::Pod->VERSION(1.22); 1 }
    or plan skip_all => 'Test::Pod 1.22 is not installed';
eval { require Test::Pod::Coverage; Test::Pod::Coverage->VERSION(1.08); 1 }
    or plan skip_all => 'Test::Pod::Coverage 1.08 is not installed';

my @pod = Test::Pod::all_pod_files(qw(perl/lib bin script bench t/lib));
ok @pod >= 3, scalar(@pod) . ' files with POD';
Test::Pod::pod_file_ok($_) for @pod;

# Pod::Coverage looks at the loaded package; the modules live in perl/lib,
# the built XS in blib.
for my $module (qw(Cache::Memcached::RustXS Cache::Memcached::RustXS::GetParser
                   Cache::Memcached::RustXS::Zlib Cache::Memcached::RustXS::Dict
                   Cache::Memcached::RustXS::Dict::CLI Cache::Memcached::RustXS::Dict::Measure
                   Cache::Memcached::RustXS::Dict::Report Cache::Memcached::RustXS::Dict::Sample
                   Cache::Memcached::RustXS::Dict::Server Cache::Memcached::RustXS::Dict::Memory
                   Cache::Memcached::RustXS::Dict::Tune Cache::Memcached::RustXS::Dict::Sets)) {
    Test::Pod::Coverage::pod_coverage_ok($module, {
        # Perl's own hook, called by threads, not by users.
        also_private => [qr/\ACLONE\z/],
    }, "$module: every public function documented");
}

done_testing;
