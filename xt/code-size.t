#!/usr/bin/perl
# No Perl module and no file of the engine's C ABI over 600 lines of code:
# a file that size holds more than one concept, and is split by concept
# (DictionarySet into its manifest, its state over time and its IDs; the C
# ABI by subsystem). Lines of code: without POD, comments, blank lines and,
# in Rust, the #[cfg(test)] module at the end of the file.
use strict;
use warnings;

use lib 't/lib';
use File::Find ();
use Test::More;
use CMRXTest::Source qw(code_of perl_files);

my $MAX_LINES = 600;

sub code_lines { scalar grep { /\S/ } split /\n/, $_[0] }

# A Rust file's code: without its tests, its comments and doc comments.
sub rust_code {
    my ($file) = @_;
    open my $fh, '<', $file or die "$file: $!";
    my $text = do { local $/; <$fh> };
    $text =~ s/^#\[cfg\(test\)\]\s*\nmod tests\b.*//ms;
    $text =~ s{^\s*//[^\n]*}{}mg;
    return $text;
}

# The checks count what they are meant to.
is code_lines("a\n\n  \nb\n"), 2, 'blank lines are not counted';
is code_lines(CMRXTest::Source::code_of(__FILE__)) < 60, 1, 'comments are not counted (this file)';

my @modules = grep { /\.pm\z/ } perl_files('perl/lib');
ok @modules > 20, scalar(@modules) . ' modules in perl/lib';
for my $file (@modules) {
    my $n = code_lines(code_of($file));
    cmp_ok $n, '<=', $MAX_LINES, "$file: $n lines of code";
}

my @abi;
# rust/ffi.rs and rust/ffi/*.rs but the module of their tests.
File::Find::find({ no_chdir => 1, wanted => sub {
    push @abi, $_ if m{/ffi(?:\.rs|/[^/]+\.rs)\z} && !m{/tests\.rs\z};
} }, 'rust');
ok @abi, scalar(@abi) . ' files of the C ABI in rust/';
for my $file (sort @abi) {
    my $n = code_lines(rust_code($file));
    cmp_ok $n, '<=', $MAX_LINES, "$file: $n lines of code";
}

done_testing;
