#!/usr/bin/perl
# The tests' own mistakes that only a host without memcached or without a
# client would show. `skip CMRXTest::Memcached->unavailable, 1` is read by
# perl as the indirect method call CMRXTest::Memcached->skip(...) once that
# class is loaded: the line runs only when memcached is missing, and there
# it dies. So a Test::More function is never followed by a class name and
# an arrow: its arguments take parentheses. (start_or_skip after tests,
# the other such mistake, dies where memcached runs too: t/00-helpers.t.
# The "no memcached" rows of script/client-matrix run every file without
# memcached.)
use strict;
use warnings;

use lib 't/lib';
use File::Temp ();
use Test::More;
use CMRXTest::Source qw(code_of perl_files);

# Test::More's functions that take a first argument.
my $FUNCTIONS = join '|', qw(
    skip todo_skip plan ok is isnt like unlike cmp_ok is_deeply pass fail
    diag note explain subtest BAIL_OUT can_ok isa_ok new_ok
);
my $INDIRECT = qr/(?<![\$\@%&>:\w])(?:$FUNCTIONS)\s+[A-Za-z_]\w*(?:::\w+)*\s*->/;

# The check catches the mistake it is for, and perl reads it as feared.
{
    my $code = "package Some::Helper; sub why { 'the reason' }\npackage main;\n"
             . "use Test::More;\nSKIP: { skip" . " Some::Helper->why, 1 }\ndone_testing;\n";
    like $code, $INDIRECT, 'a class method call after skip, without parentheses, is found';
    unlike 'skip(Some::Helper->why, 1); $tb->skip(Foo->why); skip $why, 1', $INDIRECT,
        '... and its right forms are not';
    my $tmp = File::Temp->new(SUFFIX => '.t');
    print {$tmp} $code;
    close $tmp;
    my $out = `"$^X" "$tmp" 2>&1`;
    like $out, qr/Can't locate object method "skip" via package "Some::Helper"/,
        '... which perl reads as a method call';
}

# pass() asserts nothing: a test that reached it has shown nothing that a
# broken module would not also show. A skipped case is a skip with its
# reason; a checked one an ok with its condition.
my $PASS = qr/(?<![\$\@%&>:\w])pass\b\s*[('"]/;
like q{    pass 'every file matches';}, $PASS, 'pass used as an assertion is found';
unlike q{    my $pass = 1; bypass('x'); $tb->pass('y'); # a pass 'z'}, qr/^\s*$PASS/m,
    '... and other uses of the word are not';

my @files = perl_files(qw(t xt));
ok @files > 10, scalar(@files) . ' Perl files in t/ and xt/';
for my $file (@files) {
    my @lines = split /\n/, code_of($file);
    is_deeply [ grep { $_ =~ $INDIRECT } @lines ], [],
        "$file: every Test::More call with a class's method as its first argument has parentheses";
    next if $file =~ m{(?:^|/)test-hygiene\.t\z};    # names the word in its own checks
    is_deeply [ grep { $_ =~ $PASS } @lines ], [], "$file: no pass() as an assertion";
}

done_testing;
