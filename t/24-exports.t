#!/usr/bin/perl
# What a module's POD offers for import imports. Zlib and Zstd say "ask for
# any of the names below" over their FUNCTIONS: every function named there
# is importable by name and by :all, each in a fresh perl, as a user's
# `perl -MModule=name` or `use Module qw(name)` asks for it.
use strict;
use warnings;

use lib 't/lib';
use Test::More;
use CMRXTest::Modules qw(module_file);
use CMRXTest::Peers qw(slurp);

# The functions a module's FUNCTIONS section names in its =item lines.
sub documented_functions {
    my ($module) = @_;
    my ($functions) = slurp(module_file($module)) =~ /^=head1 FUNCTIONS\n(.*?)^=head1 /ms
        or die "$module has no FUNCTIONS section\n";
    my %seen;
    return grep { !$seen{$_}++ } $functions =~ /^=item (\w+)\(/mg;
}

# Runs perl -Mblib -M$module=$import -e $code (no shell) and returns its
# standard output and status; what it warns shows in the test's output.
sub import_in_perl {
    my ($module, $import, $code) = @_;
    open my $perl, '-|', $^X, '-Mblib', "-M$module=$import", '-e', $code
        or die "cannot run $^X: $!\n";
    my $out = do { local $/; <$perl> };
    close $perl;
    return (defined $out ? $out : '', $?);
}

for my $module (qw(Cache::Memcached::RustXS::Zlib Cache::Memcached::RustXS::Zstd)) {
    my @functions = documented_functions($module);
    cmp_ok scalar(@functions), '>=', 5, "$module documents @functions";
    for my $name (@functions) {
        my ($out, $status) = import_in_perl($module, $name, "print defined(&main::$name) ? 'imported' : 'absent'");
        is $status, 0, "perl -M$module=$name runs" or diag $out;
        is $out, 'imported', "... and imports $name";
    }
    my ($out, $status) = import_in_perl($module, ':all',
        'print join q( ), grep { !defined &{"main::$_"} } qw(' . join(' ', @functions) . ')');
    is $status, 0, "perl -M$module=:all runs" or diag $out;
    is $out, '', '... and imports every documented function';
}

# The override's state, imported, tells the override as the full name does.
my ($out, $status) = import_in_perl('Cache::Memcached::RustXS::Zlib', 'compress_zlib_overridden,override_compress_zlib',
    'print compress_zlib_overridden() ? 1 : 0; override_compress_zlib(); print compress_zlib_overridden() ? 1 : 0');
is $status, 0, 'compress_zlib_overridden imported with override_compress_zlib' or diag $out;
is $out, '01', '... says false before the override and true after it';

done_testing;
