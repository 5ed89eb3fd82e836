#!/usr/bin/perl
# Cache::Memcached with Cache::Memcached::RustXS::GetParser against hostile
# servers: scripted fakes (CMRXTest::FakeServer) sending bad responses, next
# to a good server in the same get_multi -- a real memcached, or without
# one a fake that answers with the same values. The parser must fail fast
# (well before select_timeout), store nothing partial, finalize what it
# finished, and leave the good server's values alone. "Fast" is asserted
# only with CMRX_TIMING_TESTS=1 (xt/timing-getparser-hostile.t); every case
# asserts its results either way.
use strict;
use warnings;

use lib 't/lib';
use Compress::Zlib ();
use Storable ();
use Time::HiRes qw(time);
use Test::More;

use Cache::Memcached::RustXS::GetParser;
use CMRXTest::Clients qw(cache_memcached_missing cache_memcached);
use CMRXTest::FakeServer;
use CMRXTest::Keys qw(keys_for);
use CMRXTest::Memcached;
use CMRXTest::Timing qw(timing_ok timing_tests timing_skip);

plan skip_all => cache_memcached_missing() if cache_memcached_missing();

my $NS      = 'h:';
my $TIMEOUT = 5;      # select_timeout: a parser that waits for it is slow
my $FAST    = 0.5;    # generous bound for "failed at once" (xt/ only)

my $good;    # the good server, set below

sub item {    # one VALUE item as a server sends it
    my ($key, $flags, $data) = @_;
    return "VALUE $NS$key $flags " . length($data) . "\r\n$data\r\n";
}

# What the fake sends for its finished values, and what they must become.
my $text = join ' ', map { "gzip me $_" } 1 .. 200;
my $ref  = { list => [ 1, 2, "\0\r\nEND\r\n" ] };
my @fake_data = (
    [ 0, "a\0b\r\nEND\r\nVALUE x 0 1\r\n" ],                               # raw
    [ 2, Compress::Zlib::memGzip($text) ],                                  # gzip
    [ 3, Compress::Zlib::memGzip(Storable::nfreeze($ref)) ],                # both
);
my @fake_want = ($fake_data[0][1], $text, $ref);

# Keys for each server, by Cache::Memcached's own mapping. The servers are
# always [good, fake], so a key's server is its bucket (hash % 2) whatever
# the ports: one set of keys serves every case, found with two placeholder
# addresses.
my (@gk, @fk);
{
    my $map = Cache::Memcached->new({ servers => [ '127.0.0.1:1', '127.0.0.1:2' ] });
    @gk = keys_for($map, '127.0.0.1:1', 4, 'g');
    @fk = keys_for($map, '127.0.0.1:2', 4, 'f');
}
my %good_want = (
    $gk[0] => "good\0\r\nEND\r\n", $gk[1] => '',
    $gk[2] => { deep => [ 'x' x 500 ] }, $gk[3] => join('', map { chr } 0 .. 255),
);

# The good server: a real memcached, its values set once; without memcached
# (CMRX_REQUIRE_MEMCACHED=1 makes that fail) a fake answering every request
# with the values as Cache::Memcached stores them (a reference frozen with
# Storable::nfreeze, flag 1).
$good = CMRXTest::Memcached->start_optional;
SKIP: {
    skip 'memcached: ' . CMRXTest::Memcached->unavailable
       . ' (a fake server plays the good one)', 1 unless $good;
    my $memd = Cache::Memcached->new({ servers => [ $good->address ], namespace => $NS });
    is scalar(grep { $memd->set($_, $good_want{$_}) } @gk), 4, 'good values set on the real server';
}
$good ||= CMRXTest::FakeServer->start(script => [ join('', map {
    ref $good_want{$_} ? item($_, 1, Storable::nfreeze($good_want{$_}))
                       : item($_, 0, $good_want{$_})
} @gk) . "END\r\n" ]);
note 'good server: ' . ($good->isa('CMRXTest::Memcached') ? 'memcached' : 'a fake');

# One get_multi of all keys against a fake playing @$script next to the real
# server; returns the result, the elapsed time and the fake.
sub run_case {
    my ($script, %opt) = @_;
    my $fake = CMRXTest::FakeServer->start(script => $script);
    my $memd = cache_memcached(servers => [ $good->address, $fake->address ], namespace => $NS,
                               select_timeout => $TIMEOUT, %opt);
    my $t0 = time;
    my $got = $memd->get_multi(@gk, @fk);
    return ($got, time - $t0, $fake);
}

sub finished_items {    # the fake's three finished values (keys $fk[0..2])
    return join '', map { item($fk[$_], @{ $fake_data[$_] }) } 0 .. 2;
}

# ---- bad responses: fail fast, nothing partial, finished values finalized --------

my @cases = (
    [ 'SERVER_ERROR'   => sub { "SERVER_ERROR out of memory storing object\r\n" } ],
    [ 'CLIENT_ERROR'   => sub { "CLIENT_ERROR line format\r\n" } ],
    [ 'ERROR'          => sub { "ERROR\r\n" } ],
    [ 'unknown line'   => sub { "NOT_FOUND\r\n" } ],
    [ 'bad length'     => sub { "VALUE $NS$fk[3] 0 12abc\r\n" } ],
    [ 'length > 1 GiB' => sub { "VALUE $NS$fk[3] 0 1073741825\r\n" } ],
    [ 'bad terminator' => sub { "VALUE $NS$fk[3] 0 5\r\npart!XX" } ],
    [ 'endless line'   => sub { 'SERVER_ERROR ' . ('x' x 5000) } ],
    [ 'closed mid-value' => sub { "VALUE $NS$fk[3] 0 100\r\n" . ('p' x 40) }, 'close' ],
    [ 'reset mid-value'  => sub { "VALUE $NS$fk[3] 0 100\r\n" . ('p' x 40) }, 'reset' ],
);
for my $case (@cases) {
    my ($name, $bad, $end) = @$case;
    # The connection stays open after the bad bytes (hold), so only the
    # parser's strictness can end the read early; or it closes / resets.
    my ($got, $elapsed, $fake) = run_case([ finished_items(), $bad->(),
        $end ? [ $end => 1 ] : [ hold => 2 * $TIMEOUT ] ]);
    like +($fake->requests)[0] // '', qr/\Aget .*\Q$NS$fk[0]\E/, "$name: the fake was asked";
    timing_ok $elapsed, '<', $FAST, "$name: get_multi returns at once (select_timeout $TIMEOUT s)";
    ok !exists $got->{ $fk[3] }, "$name: nothing partial for the failed value";
    is_deeply [ @$got{ @fk[0 .. 2] } ], \@fake_want,
        "$name: values finished before the failure are finalized (no CRLF, gunzipped, thawed)";
    is_deeply { map { $_ => $got->{$_} } grep { exists $got->{$_} } @gk }, \%good_want,
        "$name: the good server's values intact";
    is scalar keys %$got, 7, "$name: nothing else in the result";
}

# Control: the pure-Perl parser waits for select_timeout on SERVER_ERROR (so
# the timing above really measures our parser's fail-fast). Only a time to
# measure: run with the timing assertions.
SKIP: {
    my $name = 'control: the pure-Perl parser waits for select_timeout';
    skip timing_skip($name), 1 unless timing_tests();
    my ($got, $elapsed) = run_case(
        [ finished_items(), "SERVER_ERROR oops\r\n", [ hold => 5 ] ],
        parser_class => 'Cache::Memcached::GetParser', select_timeout => 0.6);
    cmp_ok $elapsed, '>=', 0.55, $name;
}

# ---- dribbled and split responses parse correctly -------------------------------

my %all_want = (%good_want, map { $fk[$_] => $fake_want[$_] } 0 .. 2);
{
    my $resp = finished_items() . item($fk[3], 0, "last\r\nEND\r\n") . "END\r\n";
    my ($got, $elapsed) = run_case([ [ dribble => $resp, 0.0005 ] ]);
    is_deeply $got, { %all_want, $fk[3] => "last\r\nEND\r\n" },
        'one byte per write: every value, finalized, and the real server\'s';
    timing_ok $elapsed, '<', $TIMEOUT, 'and it completed without a select timeout';
}
{
    # Split inside a VALUE line, inside data, between data and its CRLF, in
    # the CRLF, and inside END.
    my $pause = [ sleep => 0.05 ];
    my ($got, $elapsed) = run_case([ finished_items(), "VALUE $NS$fk[3] 0", $pause,
        " 6\r\nsp", $pause, "lit!", $pause, "\r", $pause, "\nEN", $pause, "D\r",
        $pause, "\n" ]);
    is_deeply $got, { %all_want, $fk[3] => 'split!' },
        'split across writes (VALUE line, data, CRLF, END): every value, finalized';
    timing_ok $elapsed, '<', 2, 'and it did not wait for the select_timeout';
}

done_testing;
