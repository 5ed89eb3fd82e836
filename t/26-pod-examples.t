#!/usr/bin/perl
# The POD's examples a user copies into an application, beyond the
# SYNOPSES (t/04, t/05) and the Cache::Memcached::Fast examples (t/09):
# Zstd's counters() sent to statsd and written as Prometheus text, and
# GetParser's get_response_items, each run as written (only statsd's
# address replaced by a UDP socket of this test's) after the process read
# a value with a dictionary, and checked for what its text says it does.
use strict;
use warnings;

use lib 't/lib';
use Test::More;
use File::Temp ();
use IO::Select ();
use IO::Socket::INET ();
use CMRXTest::Peers qw(slurp spew);

my $ZSTD_POD   = 'lib/Cache/Memcached/RustXS/Zstd.pm';
my $PARSER_POD = 'lib/Cache/Memcached/RustXS/GetParser.pm';
my $DICTIONARY = 't/data/cmrx-dict/dz.dict';

# The verbatim lines of $file from the one starting with $first (at the
# start of a paragraph) to the one starting with $last, both included, unindented (blank lines and the text
# between paragraphs left out).
sub example {
    my ($file, $first, $last) = @_;
    my ($code) = slurp($file) =~ /\n\n(    \Q$first\E.*?^ +\Q$last\E[^\n]*\n)/ms
        or die "$file: no example from '$first' to '$last'\n";
    return join '', map { s/\A    //; "$_\n" } grep { /\A    / } split /\n/, $code;
}

my $scratch = File::Temp->newdir;
my $seq = 0;

# Runs $code in a fresh perl after a prelude that reads one value written
# with the dictionary $DICTIONARY (its ID in $main::ID); returns stdout.
sub run_example {
    my ($code) = @_;
    my $script = "$scratch/example" . ++$seq . '.pl';
    spew($script, <<"PRELUDE" . $code);
use strict;
use warnings;
use Cache::Memcached::RustXS::Zstd ();
our \$ID = Cache::Memcached::RustXS::Zstd::load_dictionary('$DICTIONARY');
Cache::Memcached::RustXS::Zstd::decompress(
    Cache::Memcached::RustXS::Zstd::compress('{"id":1,"name":"a user"}' x 20, dictionary => \$ID));
print STDERR "ID \$ID\\n";
PRELUDE
    open my $perl, '-|', "$^X -Mblib $script 2>&1" or die "cannot run $^X: $!\n";
    my $out = do { local $/; <$perl> };
    close $perl;
    is $?, 0, "example $seq runs" or diag $out;
    return defined $out ? $out : '';
}

# ---- statsd ------------------------------------------------------------------

{
    my $statsd = IO::Socket::INET->new(LocalAddr => '127.0.0.1', LocalPort => 0, Proto => 'udp')
        or die "cannot open a UDP socket: $!\n";
    my $address = '127.0.0.1:' . $statsd->sockport;
    my $code = example($ZSTD_POD, 'use IO::Socket::INET;', 'send_counters();');
    like $code, qr/127\.0\.0\.1:8125/, "Zstd's statsd example sends to 127.0.0.1:8125";
    $code =~ s/127\.0\.0\.1:8125/$address/g;
    my ($dictionary) = run_example($code) =~ /^ID (\d+)$/m;
    my @datagrams;
    my $select = IO::Select->new($statsd);
    while ($select->can_read(@datagrams ? 0.2 : 5)) {
        $statsd->recv(my $datagram, 65536);
        push @datagrams, $datagram;
    }
    ok @datagrams, scalar(@datagrams) . ' statsd datagrams';
    my @bad = grep { !/\Acmrx\.[\w.]+:\d+\|c\z/ } @datagrams;
    is "@bad", '', '... each a statsd counter (cmrx.NAME:DELTA|c)';
    ok((grep { $_ eq "cmrx.dictionaries.$dictionary.read.values:1|c" } @datagrams),
       "... one says the value read with dictionary $dictionary")
        or diag join "\n", @datagrams;
}

# ---- Prometheus ----------------------------------------------------------------

{
    my $code = example($ZSTD_POD, 'use Cache::Memcached::RustXS::Zstd qw(counters);', 'print prometheus_text();');
    my $out = run_example($code);
    my ($dictionary) = $out =~ /^ID (\d+)$/m;
    my @lines = grep { !/\AID \d+\z/ } split /\n/, $out;
    my @bad = grep { !/\A# TYPE cmrx_\w+_total counter\z/ && !/\Acmrx_\w+_total\{\w+="[^"]*",pid="\d+"\} \d+\z/ } @lines;
    ok @lines > 10, scalar(@lines) . ' lines of Prometheus text';
    is "@bad", '', '... each a TYPE line or a counter with its labels';
    like $out, qr/^cmrx_read_values_total\{dictionary="$dictionary",pid="\d+"\} 1$/m,
        "... one says the value read with dictionary $dictionary";
}

# ---- GetParser's get_response_items ------------------------------------------

{
    my $code = example($PARSER_POD, 'my ($items, $complete) = Cache::Memcached::RustXS::GetParser::get_response_items(',
                       '"VALUE user:1 2 4');
    my @said = slurp($PARSER_POD) =~ /^    # \$items: (.*)\n    # \$complete: (\d)/m
        or die "$PARSER_POD: no comment saying what get_response_items returns\n";
    my $out = run_example("use Cache::Memcached::RustXS::GetParser ();\nuse Data::Dumper ();\n$code"
        . 'local $Data::Dumper::Indent = 0; local $Data::Dumper::Terse = 1; local $Data::Dumper::Useqq = 1;'
        . "\nprint Data::Dumper::Dumper(\$items), \"\\n\$complete\\n\";\n");
    my ($items, $complete) = grep { !/\AID \d+\z/ } split /\n/, $out;
    my $expected = eval "no strict; no warnings; my \$v = $said[0]; \$v" or die "the comment is no Perl: $@";
    my $got = eval "no strict; $items" or die "cannot read the output: $@ ($items)";
    is_deeply $got, $expected, "GetParser's get_response_items example returns what its comment says";
    is $complete, $said[1], "... and \$complete is $said[1]";
}

done_testing;
