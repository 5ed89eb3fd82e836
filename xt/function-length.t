#!/usr/bin/perl
# No function over 80 lines in lib or in the engine (rust/), tests
# aside: a longer one holds several steps that want names of their own.
# Lines from the `sub`/`fn` line to its closing brace, comments and blank
# lines included (CMRXTest::Source::function_lengths).
use strict;
use warnings;

use lib 't/lib';
use File::Find ();
use File::Temp ();
use Test::More;
use CMRXTest::Source qw(function_lengths perl_files);

my $MAX_LINES = 80;

# The functions of the files over $MAX_LINES lines: "file:line name (N lines)".
sub too_long {
    my @long;
    for my $file (@_) {
        push @long, map { "$file:$_->[1] $_->[0] ($_->[2] lines)" }
                    grep { $_->[2] > $MAX_LINES } function_lengths($file);
    }
    return @long;
}

# A file of $body: its name in a new temporary folder.
sub planted {
    my ($name, $body) = @_;
    my $dir = File::Temp::tempdir(CLEANUP => 1);
    open my $fh, '>', "$dir/$name" or die "$dir/$name: $!";
    print {$fh} $body;
    close $fh or die "$dir/$name: $!";
    return "$dir/$name";
}

# The check finds what it should: a function of 81 lines and not one of 80,
# in either language, however its body is indented or commented.
{
    my $body = join '', map { "    # line $_\n" } 1 .. $MAX_LINES - 2;
    my $perl = planted('Planted.pm', "package Planted;\nsub fits {\n$body}\n"
        . "sub over {\n$body\n}\nsub one { 1 }\nsub declared;\n1;\n__END__\nsub after_end {\n$body\n\n}\n");
    is_deeply [ map { "$_->[0] $_->[2]" } function_lengths($perl) ],
        [ 'fits 80', 'over 81', 'one 1' ], 'Perl: the lengths of a planted file, declarations and __END__ aside';
    is scalar(() = too_long($perl)), 1, '... one over the bar';
    (my $rust_body = $body) =~ s/#/\/\//g;
    my $rust = planted('planted.rs', "pub fn fits() {\n$rust_body}\nimpl A {\n    pub(crate) unsafe fn over(\n"
        . "        a: u8,\n    ) -> u8 {\n$rust_body    }\n}\ntrait B {\n    fn declared(&self);\n}\n"
        . "#[cfg(test)]\nmod tests {\nfn in_tests() {\n$rust_body\n\n}\n}\n");
    is_deeply [ map { "$_->[0] $_->[2]" } function_lengths($rust) ],
        [ 'fits 80', 'over 82' ], 'Rust: the lengths of a planted file, its tests and declarations aside';
}

my @perl = grep { /\.pm\z/ } perl_files('lib');
ok @perl > 20, scalar(@perl) . ' modules in lib';
my @rust;
File::Find::find({ no_chdir => 1, wanted => sub {
    # The tests' own files: their module, their shared support.
    push @rust, $_ if /\.rs\z/ && !m{/(?:tests|test_support|testing)\.rs\z};
} }, 'rust');
ok @rust > 10, scalar(@rust) . ' files of the engine in rust/';

for my $file (@perl, sort @rust) {
    my @long = too_long($file);
    is_deeply \@long, [], "$file: no function over $MAX_LINES lines" or diag join "\n", @long;
}

done_testing;
