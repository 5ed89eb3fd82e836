#!/usr/bin/perl
# One release number: Cargo.toml's MAJOR.MINOR.PATCH, which each module
# states as a literal Perl decimal version (0.1.0 is 0.100) that the CPAN
# toolchain reads without running anything, which the linked engine reports,
# and which Changes and MYMETA carry. A stale .pm/.so pair is refused.
use strict;
use warnings;

use lib 't/lib';
use ExtUtils::MakeMaker ();
use File::Find ();
use Test::More;

use Cache::Memcached::RustXS ();
use CMRXTest::Peers qw(slurp);

my ($semver) = slurp('Cargo.toml') =~ /^\[package\].*?^version\s*=\s*"([^"]+)"/ms;
ok $semver, "Cargo.toml states version $semver";
my ($major, $minor, $patch) = $semver =~ /\A(\d+)\.(\d+)\.(\d+)\z/;
my $perl_version = sprintf '%d.%d%02d', $major, $minor, $patch;

is Cache::Memcached::RustXS::engine_version(), $semver, 'the linked engine reports it';

my @pm;
File::Find::find({ no_chdir => 1, wanted => sub { push @pm, $_ if /\.pm\z/ } }, 'lib');
ok @pm >= 3, scalar(@pm) . ' modules';
my $have_mm = eval { require Module::Metadata; 1 };
for my $file (sort @pm) {
    is(MM->parse_version($file), $perl_version, "$file: MM->parse_version");
    SKIP: {
        skip 'Module::Metadata is not installed', 1 unless $have_mm;
        my $meta = Module::Metadata->new_from_file($file);
        is($meta && $meta->version && $meta->version->stringify, $perl_version,
           "$file: Module::Metadata");
    }
    (my $module = $file) =~ s{^lib/|\.pm\z}{}g;
    $module =~ s{/}{::}g;
    eval "require $module; 1" or die $@;
    is $module->VERSION, $perl_version, "$module->VERSION at run time";
}

# `use Cache::Memcached::RustXS 1.0` for any 1.0.x: 1.0 is compared as 1.000.
ok eval { Cache::Memcached::RustXS->VERSION("$major.$minor"); 1 },
    "use Cache::Memcached::RustXS $major.$minor works" or diag $@;
ok !eval { Cache::Memcached::RustXS->VERSION($major . '.' . ($minor + 1)); 1 },
    'and a newer minor release is refused';

my ($changes_top) = slurp('Changes') =~ /^(\d\S*)\s/m;
is $changes_top, $perl_version, 'the newest Changes entry is this version';

SKIP: {
    skip 'no MYMETA.json (run Makefile.PL first)', 1 unless -f 'MYMETA.json';
    like slurp('MYMETA.json'), qr/"version"\s*:\s*"\Q$perl_version\E"/, 'MYMETA.json carries it';
}

# The XS object checks the version of the .pm loading it.
my $stale = `"$^X" -Mblib -e "package Cache::Memcached::RustXS; our \\\$VERSION = '9.999'; require XSLoader; XSLoader::load(__PACKAGE__, \\\$VERSION)" 2>&1`;
isnt $?, 0, 'a .pm of another version cannot load the object';
like $stale, qr/version.*(?:does not match|mismatch)/i, '... with a message saying so';

done_testing;
