#!/usr/bin/perl
# Each helper has one home: the tests' own in t/lib (CMRXTest::), the
# benchmark's own in bench/lib (CMRXBench::), and what both use in dev/lib
# (CMRXDev::: the memcached servers, the corpus reader, the reader of get
# responses). The code of the tests never loads the benchmark's helpers,
# the benchmark's never the tests', and dev/lib's neither. A helper that
# several tests use is defined in its module alone; get responses are read
# by the distribution's parser alone (through CMRXDev::GetResponse in the
# tests and the benchmark), and Test::LeakTrace is called by
# CMRXTest::LeakCheck alone.
use strict;
use warnings;
use lib 't/lib';
use Test::More;
use CMRXTest::Source qw(code_of perl_files subs_defined);

my %rules = (
    tests     => [ [qw(t xt)],  qr{\bCMRXBench::|\bbench/lib\b} ],
    benchmark => [ ['bench'],   qr{\bCMRXTest::|\bt/lib\b} ],
    dev       => [ ['dev/lib'], qr{\bCMRXTest::|\bCMRXBench::|\bt/lib\b|\bbench/lib\b} ],
);
for my $who (sort keys %rules) {
    my ($dirs, $foreign) = @{ $rules{$who} };
    my @files = perl_files(@$dirs);
    ok @files, "the $who: " . scalar(@files) . ' Perl files';
    my @offenders = grep { code_of($_) =~ $foreign } @files;
    is_deeply \@offenders, [], "the $who load no helper from another's home";
}

# The shared helpers are where both sides find them.
ok -f "dev/lib/CMRXDev/$_.pm", "dev/lib has CMRXDev::$_" for qw(Memcached ChildProcess Corpus GetResponse);
like code_of('bench/run.pl'), qr{use lib .*dev/lib}, 'bench/run.pl takes dev/lib';

# ---- one home for each shared helper -------------------------------------------

my @TEST_FILES = perl_files(qw(t xt dev/lib));
my @ALL_FILES  = perl_files(qw(t xt dev bench));
my %defines = map { my $file = $_; ($file => { map { ($_ => 1) } subs_defined($file) }) } @ALL_FILES;

# home => the helpers it alone defines, and where no other may define them.
my @HOMES = (
    [ 'dev/lib/CMRXDev/GetResponse.pm', \@ALL_FILES,  qw(response_values stored_items) ],
    [ 'dev/lib/CMRXDev/Corpus.pm',      \@ALL_FILES,  qw(corpus_values corpus_halves) ],
    [ 't/lib/CMRXTest/Clients.pm',      \@TEST_FILES, qw(cache_memcached same_value why_missing) ],
    [ 't/lib/CMRXTest/LeakCheck.pm',    \@TEST_FILES, qw(no_leaks leaked_svs leaktrace_missing) ],
    [ 't/lib/CMRXTest/Raw.pm',          \@TEST_FILES, qw(raw_request raw_set raw_get) ],
    [ 't/lib/CMRXTest/Stored.pm',       \@TEST_FILES, qw(frame_dictionary stored_as) ],
    [ 't/lib/CMRXTest/Peers.pm',        \@TEST_FILES, qw(slurp spew) ],
    [ 't/lib/CMRXTest/Protocol.pm',     \@TEST_FILES, qw(value_item finalizer) ],
);
for my $home (@HOMES) {
    my ($file, $where, @helpers) = @$home;
    for my $helper (@helpers) {
        ok $defines{$file}{$helper}, "$file defines $helper";
        my @others = grep { $_ ne $file && $defines{$_}{$helper} } @$where;
        is_deeply \@others, [], "no other file defines $helper";
    }
}

# Only CMRXTest::LeakCheck calls Test::LeakTrace; the tests call its no_leaks.
my $SELF = 't/08-helper-homes.t';    # names what it looks for
my $LEAKTRACE = qr/\bTest::LeakTrace::\w|\b(?:use|require)\s+Test::LeakTrace\b/;
my @leak_checkers = grep {
    my $code = code_of($_);
    # (index first: the pattern alone tries every word of every file)
    $_ ne $SELF && index($code, 'Test::LeakTrace') >= 0 && $code =~ $LEAKTRACE;
} perl_files(qw(t xt));
is_deeply \@leak_checkers, ['t/lib/CMRXTest/LeakCheck.pm'], 'Test::LeakTrace is called by CMRXTest::LeakCheck alone';

# A VALUE line read by hand: a pattern with VALUE and a capture or a class
# after it, as every reader before the parser's get_response_items had.
my $HAND_READ = qr/VALUE (?:\(|\\S|\\Q|\[)/;
like 'm/\AVALUE (\S+) (\d+)/', $HAND_READ, 'a VALUE line read by hand is found';
like 'qr/\AVALUE ([^\0\n ]{1,250}) ([0-9]+)/', $HAND_READ, '... with a class too';
unlike 'print "VALUE $key 0 ", length($value)', $HAND_READ, '... and a response written is not';
# Get responses are read by the distribution's parser: the code of the
# distribution through GetParser's get_response_items or a parser object,
# the tests' and the benchmark's through CMRXDev::GetResponse, which calls
# them. Only a file that needs what no reader of whole responses gives may
# follow the lines itself:
my %MAY_READ = (
    $SELF                          => 'the check',
    't/lib/CMRXTest/FaultProxy.pm' => 'cuts the stream at exact byte offsets inside the replies as they '
        . 'pass, a piece at a time: it needs where each VALUE line and data block begins and ends in '
        . 'the bytes still in flight, which no reader of items gives, and it judges nothing',
);
my @readers = grep { !$MAY_READ{$_} && code_of($_) =~ $HAND_READ } perl_files(qw(t xt dev bench lib bin));
is_deeply \@readers, [], 'get responses are read by the parser (through CMRXDev::GetResponse in t, dev and bench) alone';
ok code_of('t/lib/CMRXTest/FaultProxy.pm') =~ $HAND_READ, '... FaultProxy, which may, does (the check still sees a reader)';

# The distribution's modules take " at FILE line N." off a message through
# Cache::Memcached::RustXS::_error_message alone, and write a date of a
# dictionary set through its Manifest's manifest_date alone.
{
    my $STRIP = qr/line \[0-9\]\+|line \\d\+/;
    like 's/ at \S+ line \d+\.?\n?\z//', $STRIP, 'a message stripped by hand is found';
    my @strippers = grep { code_of($_) =~ $STRIP } perl_files('lib');
    is_deeply \@strippers, ['lib/Cache/Memcached/RustXS.pm'], '" at FILE line N" is taken off in one place';
    my @dates = grep { code_of($_) =~ /strftime\('%Y-%m-%dT%H:%M:%SZ'/ } perl_files('lib');
    is_deeply \@dates, ['lib/Cache/Memcached/RustXS/Zstd/DictionarySet/Manifest.pm'],
        "a set's dates are written in one place";
}

done_testing;
