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
use File::Temp ();
use Test::More;
use CMRXTest::Source qw(code_of perl_files);

my $MAX_LINES = 600;

sub code_lines { scalar grep { /\S/ } split /\n/, $_[0] }

sub write_file {
    my ($file, $text) = @_;
    open my $fh, '>', $file or die "$file: $!";
    print {$fh} $text;
    close $fh or die "$file: $!";
}

# A Rust file's code: without its tests, its comments and doc comments.
sub rust_code {
    my ($file) = @_;
    open my $fh, '<', $file or die "$file: $!";
    my $text = do { local $/; <$fh> };
    $text =~ s/^#\[cfg\(test\)\]\s*\nmod tests\b.*//ms;
    $text =~ s{^\s*//[^\n]*}{}mg;
    return $text;
}

# The checks count what they are meant to: a planted module of exactly
# $MAX_LINES lines of code among POD, comments and blank lines passes, one
# more line fails; likewise a Rust file, its tests aside.
is code_lines("a\n\n  \nb\n"), 2, 'blank lines are not counted';
{
    my $dir  = File::Temp::tempdir(CLEANUP => 1);
    my $code = join '', map { "my \$v$_ = $_;    # a comment\n# another\n\n" } 1 .. $MAX_LINES - 1;
    my $pod  = "=head1 NAME\n\nPlanted\n\n=cut\n";
    for my $extra (0, 1) {
        my $file = "$dir/Planted$extra.pm";
        write_file($file, "package Planted;\n$pod$code" . ("1;\n" x $extra) . "__END__\n$code");
        is code_lines(code_of($file)) <= $MAX_LINES ? 'fits' : 'over', $extra ? 'over' : 'fits',
            'a planted module of ' . ($MAX_LINES + $extra) . ' lines of code: ' . ($extra ? 'over' : 'fits');
        (my $rust = "fn a() {}\n$code") =~ s/#/\/\//g;
        $rust =~ s/^my \$/let /mg;
        write_file("$dir/planted$extra.rs", $rust . ("fn b() {}\n" x $extra) . "#[cfg(test)]\nmod tests {\n$rust}\n");
        is code_lines(rust_code("$dir/planted$extra.rs")), $MAX_LINES + $extra,
            '... a planted Rust file of as many, its tests aside';
    }
}

my @modules = grep { /\.pm\z/ } perl_files('lib');
ok @modules > 20, scalar(@modules) . ' modules in lib';
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
