#!/usr/bin/perl
# Tests of the test helpers themselves: CMRXTest::Memcached starts and stops
# real memcached servers; CMRXTest::FakeServer plays scripted responses;
# CMRXTest::DictSets splits and writes values and runs cmrx-dict;
# CMRXDev::GetResponse reads get responses by the distribution's parser.
# The lower bounds on the fake's pauses are wall-clock assertions, made only
# with CMRX_TIMING_TESTS=1 (xt/timing-helpers.t).
use strict;
use warnings;

use lib 't/lib';
use Compress::Zlib ();
use IO::Select ();
use IO::Socket::INET ();
use File::Temp ();
use Time::HiRes qw(time);
use Test::More;

use CMRXTest::DevLib;
use CMRXDev::GetResponse qw(response_values stored_items);
use CMRXTest::DictSets qw(corpus_halves run_dict dump_of write_dump json_of by_prefix named_by @NO_LIMITS);
use CMRXTest::Peers qw(slurp);
use CMRXTest::FakeServer;
use CMRXTest::Memcached;
use CMRXTest::Timing qw(timing_ok);

# ---- small raw-socket client ------------------------------------------------

sub connect_to {
    my ($address) = @_;
    my $sock = IO::Socket::INET->new(PeerAddr => $address, Proto => 'tcp',
                                     Timeout => 5);
    $sock->autoflush(1) if $sock;
    return $sock;
}

# Read until $done->($buf) is true, EOF, or 5 s. Returns ($buf, $reads, $eof).
sub read_until {
    my ($sock, $done) = @_;
    my ($buf, $reads, $eof) = ('', 0, 0);
    my $sel = IO::Select->new($sock);
    my $deadline = time + 5;
    until ($done->($buf)) {
        my $left = $deadline - time;
        last if $left <= 0 || !$sel->can_read($left);
        my $got = sysread $sock, $buf, 65536, length $buf;
        if (!$got) { $eof = 1; last }
        $reads++;
    }
    return ($buf, $reads, $eof);
}

sub command {    # one request, read up to a reply ending in $end_re
    my ($sock, $request, $end_re) = @_;
    print {$sock} $request;
    my ($buf) = read_until($sock, sub { $_[0] =~ $end_re });
    return $buf;
}

my $LINE = qr/\r\n\z/;
my $END  = qr/^END\r\n\z/m;

# ---- CMRXTest::Memcached ---------------------------------------------------

# Without memcached these skip (or, with CMRX_REQUIRE_MEMCACHED, fail); the
# fake server's tests and start_or_skip's own below run anyway.
my @servers = CMRXTest::Memcached->start_optional(count => 1);
SKIP: {
skip 'memcached: ' . CMRXTest::Memcached->unavailable, 22 unless @servers;
push @servers, CMRXTest::Memcached->start(args => ['-I', '32m']);
is scalar @servers, 2, 'two memcached servers started';
like $_->address, qr/\A127\.0\.0\.1:\d+\z/, 'address is loopback:port'
    for @servers;
isnt $servers[0]->port, $servers[1]->port, 'on different ports';
is $servers[0]->address, '127.0.0.1:' . $servers[0]->port, 'address = host:port';

for my $i (0, 1) {
    my $sock = connect_to($servers[$i]->address)
        or BAIL_OUT("cannot connect to server $i: $@");
    is command($sock, "set k$i 5 0 3\r\nv$i!\r\n", $LINE), "STORED\r\n",
        "server $i: set";
    is command($sock, "get k$i\r\n", $END), "VALUE k$i 5 3\r\nv$i!\r\nEND\r\n",
        "server $i: get returns the value";
    is command($sock, "get k" . (1 - $i) . "\r\n", $END), "END\r\n",
        "server $i: the other server's key is not here";
}

{   # -I 32m reached the second server: a 2 MiB value fits there only.
    my $big = 'x' x (2 * 1024 * 1024);
    my @reply = map {
        command(connect_to($_->address),
                "set big 0 0 " . length($big) . "\r\n$big\r\n", $LINE)
    } @servers;
    like $reply[0], qr/\ASERVER_ERROR/, 'default server refuses a 2 MiB item';
    is $reply[1], "STORED\r\n", 'server with -I 32m stores a 2 MiB item';
}

{   # A forked child exiting normally must not stop the parent's servers.
    my $pid = fork // die "fork: $!";
    if (!$pid) { @servers = (); exit 0 }    # DESTROY + END run in the child
    waitpid $pid, 0;
    ok connect_to($servers[0]->address), 'server survives a child exiting';
}

for my $s (@servers) {
    my ($port, $pid) = ($s->port, $s->pid);
    $s->stop;
    ok !kill(0, $pid), "server on port $port: process gone after stop";
    ok !connect_to("127.0.0.1:$port"), "server on port $port: port closed";
    is $s->pid, undef, 'pid is undef after stop';
    $s->stop;    # idempotent
}

{   # Going out of scope stops the server too.
    my ($port, $pid);
    {
        my $s = CMRXTest::Memcached->start;
        ($port, $pid) = ($s->port, $s->pid);
        ok kill(0, $pid), 'scoped server running';
    }
    ok !kill(0, $pid), 'scoped server stopped when the object went away';
}
}    # SKIP: memcached

{   # Without memcached: start_or_skip skips the file and start_optional
    # returns nothing, unless CMRX_REQUIRE_MEMCACHED=1: then both fail. A
    # generic CI variable changes nothing.
    my %code = (
        start_or_skip => 'CMRXTest::Memcached->start_or_skip; ok 1',
        start_or_skip_rest => 'ok 1, "before"; CMRXTest::Memcached->start_or_skip_rest; ok 0, "after"',
        start_optional => 'my @s = CMRXTest::Memcached->start_optional; '
            . 'is scalar(@s), 0, "nothing started"; '
            . 'like(CMRXTest::Memcached->unavailable, qr/memcached not found/, "why")',
    );
    my $run = sub {    # ($helper, %env) -> (exit code, output)
        my ($helper, %env) = @_;
        local %ENV = %ENV;
        delete @ENV{qw(CI CMRX_REQUIRE_MEMCACHED)};
        @ENV{ keys %env } = values %env;
        $ENV{CMRX_MEMCACHED} = '/nonexistent/memcached';
        my $code = "use CMRXTest::Memcached; use Test::More; $code{$helper}; done_testing";
        my $out = `"$^X" -It/lib -e '$code' 2>&1`;
        return ($? >> 8, $out);
    };
    for my $helper (sort keys %code) {
        my ($rc, $out) = $run->($helper);
        is $rc, 0, "$helper, no memcached: exit 0";
        my %expect = (
            start_or_skip => [ qr{^1\.\.0 # SKIP memcached not found: CMRX_MEMCACHED=/nonexistent/memcached is not an executable$}m,
                               '... the file is skipped' ],
            start_or_skip_rest => [ qr{\Aok 1 - before\nok 2 # skip memcached not found: CMRX_MEMCACHED=/nonexistent/memcached is not an executable\n1\.\.2\n\z},
                                    '... the rest of the file is skipped, saying why' ],
            start_optional => [ qr/^ok 1 - nothing started\nok 2 - why\n1\.\.2\n\z/, '... it returns nothing' ],
        );
        like $out, $expect{$helper}[0], $expect{$helper}[1];
        for my $ci (qw(true 1)) {
            my @ci = $run->($helper, CI => $ci);
            is_deeply \@ci, [ $rc, $out ], "$helper, no memcached, CI=$ci: exactly the same";
        }
        my ($req_rc, $req_out) = $run->($helper, CMRX_REQUIRE_MEMCACHED => 1);
        isnt $req_rc, 0, "$helper, no memcached, CMRX_REQUIRE_MEMCACHED=1: the test fails";
        like $req_out, qr/memcached not found.*CMRX_REQUIRE_MEMCACHED/, '... saying why';
        ($req_rc) = $run->($helper, CMRX_REQUIRE_MEMCACHED => 0);
        is $req_rc, 0, "$helper, CMRX_REQUIRE_MEMCACHED=0: not required";
    }
}

{   # start_or_skip after a test would be a "Bad plan" on a host without
    # memcached only: it dies wherever it runs, naming start_or_skip_rest.
    for my $memcached ('/nonexistent/memcached', CMRXTest::Memcached->find_binary // ()) {
        local $ENV{CMRX_MEMCACHED} = $memcached;
        my $out = `"$^X" -It/lib -e 'use CMRXTest::Memcached; use Test::More; ok 1; CMRXTest::Memcached->start_or_skip; ok 1; done_testing' 2>&1`;
        isnt $? >> 8, 0, "start_or_skip after a test, memcached $memcached: the test fails";
        like $out, qr/start_or_skip after 1 test\(s\) or a plan: a file that has run tests takes start_or_skip_rest/,
            '... saying what to call instead';
    }
}

# ---- CMRXTest::FakeServer --------------------------------------------------

{
    my $reply = "VALUE a 0 5\r\nhello\r\nEND\r\n";
    my $fake = CMRXTest::FakeServer->start(script => [$reply]);
    like $fake->address, qr/\A127\.0\.0\.1:\d+\z/, 'fake: loopback address';
    my $sock = connect_to($fake->address) or BAIL_OUT("fake: connect: $@");
    is command($sock, "get a\r\n", $END), $reply, 'fake: scripted reply';
    is command($sock, "get b\r\n", $END), $reply,
        'fake: script replays for the next request on the connection';
    is_deeply [ $fake->requests ], [ "get a\r\n", "get b\r\n" ],
        'fake: requests recorded';
    my $pid = $fake->pid;
    $fake->stop;
    ok !kill(0, $pid), 'fake: child gone after stop';
    ok !connect_to($fake->address), 'fake: port closed after stop';
}

{
    my $payload = "VALUE k 0 10\r\n0123456789\r\nEND\r\n";
    my $fake = CMRXTest::FakeServer->start(
        script => [ [dribble => $payload, 0.002] ]);
    my $sock = connect_to($fake->address);
    print {$sock} "get k\r\n";
    my ($buf, $reads) = read_until($sock, sub { $_[0] eq $payload });
    is $buf, $payload, 'fake: dribbled bytes arrive intact';
    cmp_ok $reads, '>', 1, 'fake: ... over more than one read';
    note "dribble of ", length $payload, " bytes took $reads reads";
}

{
    my $fake = CMRXTest::FakeServer->start(scripts => [
        [ "VALUE a 0 5\r\nhel", [close => 1] ],
        [ [sleep => 0.2], "END\r\n" ],
        [ [hold => 0.3], [reset => 1] ],
    ]);
    my $sock = connect_to($fake->address);
    print {$sock} "get a\r\n";
    my ($buf, undef, $eof) = read_until($sock, sub { 0 });
    is $buf, "VALUE a 0 5\r\nhel", 'fake conn 1: partial reply';
    ok $eof, 'fake conn 1: then closed';

    $sock = connect_to($fake->address);
    my $t0 = time;
    is command($sock, "get a\r\n", $END), "END\r\n", 'fake conn 2: second script';
    timing_ok time - $t0, '>=', 0.15, 'fake conn 2: after the sleep';

    $sock = connect_to($fake->address);
    $t0 = time;
    print {$sock} "get a\r\n";
    ($buf, undef, $eof) = read_until($sock, sub { 0 });
    is $buf, '', 'fake conn 3: nothing written while holding';
    ok $eof, 'fake conn 3: then reset';
    timing_ok time - $t0, '>=', 0.25, 'fake conn 3: held for the time asked';

    $sock = connect_to($fake->address);
    print {$sock} "get a\r\n";
    ($buf, undef, $eof) = read_until($sock, sub { 0 });
    ok $eof && $buf eq '', 'fake conn 4: gets the last script again';
    is scalar(() = $fake->requests), 4, 'fake: one request per connection';
}

ok !eval { CMRXTest::FakeServer->start(script => [ [bogus => 1] ]); 1 },
    'fake: unknown step is refused';

# ---- CMRXTest::DictSets ----------------------------------------------------

{
    is dump_of([ 'k:1', 'xy' ], [ 'k:2', 'z', 2 ]), "VALUE k:1 0 2\r\nxy\r\nVALUE k:2 2 1\r\nz\r\nEND\r\n",
        'dump_of: a get response, flags 0 unless given';
    my $dir = File::Temp::tempdir(CLEANUP => 1);
    my @items = map { [ "fam:$_", "value $_" ] } 1 .. 5;
    my $file = write_dump("$dir/fam.values", @items);
    is $file, "$dir/fam.values", 'write_dump: returns the path';
    is slurp($file), dump_of(@items), '... of a file holding the dump';
    {
        local $CMRXDev::Corpus::DIR = $dir;
        is_deeply [ corpus_halves('fam') ], [ { fam => [ @items[0, 2, 4] ] }, { fam => [ @items[1, 3] ] } ],
            'corpus_halves: the family read back from the dump, the even positions to train, the odd held out';
        ok !eval { corpus_halves('nosuch'); 1 }, '... a family not there dies';
    }
    my ($all) = corpus_halves();
    is scalar(keys %$all), 7, '... all seven families of the corpus by default';
    is_deeply by_prefix({ prefixes => [ { prefix => 'a:', n => 1 } ] }), { 'a:' => { prefix => 'a:', n => 1 } },
        'by_prefix: entries by prefix';
    is_deeply named_by({ dictionaries => [ { id => 3, named_by => 7 } ] }), { 3 => 7 }, 'named_by: counts by ID';
    SKIP: {
        skip 'JSON::PP is not installed', 1 unless eval { require JSON::PP; 1 };
        is_deeply json_of('{"a":[1]}'), { a => [1] }, 'json_of: decodes';
    }
    my ($status, $out) = run_dict(['--help']);
    is $status, 0, 'run_dict: cmrx-dict --help, exit 0';
    like $out, qr/^Usage:/m, '... its output';
    ($status, $out, my $err) = run_dict([ 'train', '--out', "$dir/x.dict", '-' ], stdin => "one\ntwo\n\n");
    is $status, 1, '... standard input given: two samples are too few';
    like $err, qr/cannot train a dictionary on 2 samples/, '... as its stderr says';
    ok !eval { run_dict(['--help'], 'stdin'); 1 }, '... options not in pairs die';
    ($status, $out, $err) = run_dict([ 'prune', '--dictionaries', "$dir/none", @NO_LIMITS, $file ]);
    like $err, qr/prune: unknown option --compress-time/, '... prune refuses speed limits';
    ($status, $out, $err) = run_dict([ 'prune', '--dictionaries', "$dir/none", $file ]);
    is $status, 1, '... and run_dict gives it none, though it names --dictionaries (exit 1, not 2)';
    like $err, qr/\Q$dir\E\/none is not a dictionary set/, '... the set is what it finds wrong';
}

# ---- CMRXDev::GetResponse --------------------------------------------------

{   # stored_items (get_response_items: the engine's parser over the whole
    # response) reads what a parser object (the reader in perl/src/reader.c
    # feeding the same engine) reads, and refuses what it refuses, for the
    # same reason.
    my $key250 = 'k' x 250;
    my %good = (
        'no value'          => "END\r\n",
        'values'            => "VALUE a 0 5\r\nhello\r\nVALUE b 7 0\r\n\r\nEND\r\n",
        'protocol in data'  => "VALUE a 1 12\r\n\r\nEND\r\nVALUE\r\nEND\r\n",
        'a cas field'       => "VALUE a 0 1 987654321\r\nx\r\nEND\r\n",
        'flags 2^32-1'      => "VALUE a 4294967295 3\r\nabc\r\nEND\r\n",    # not gzip: kept
        'odd key bytes'     => "VALUE a\rb\x01\xff\r 0 1\r\nx\r\nEND\r\n",
        'a 250-byte key'    => "VALUE $key250 0 1\r\nx\r\nEND\r\n",
    );
    my %bad = (
        SERVER_ERROR        => "VALUE a 0 1\r\nx\r\nSERVER_ERROR out of memory\r\n",
        CLIENT_ERROR        => "CLIENT_ERROR bad data chunk\r\n",
        ERROR               => "ERROR\r\n",
        'an unknown line'   => "STORED\r\n",
        'no END'            => "VALUE a 0 1\r\nx\r\n",
        'cut in the data'   => "VALUE a 0 10\r\nxyz",
        'no CRLF after data' => "VALUE a 0 1\r\nxyEND\r\n",
        'bytes after END'   => "END\r\nVALUE",
        'flags 2^32'        => "VALUE a 4294967296 1\r\nx\r\nEND\r\n",
        'a 251-byte key'    => "VALUE ${key250}k 0 1\r\nx\r\nEND\r\n",
        'an empty key'      => "VALUE  0 1\r\nx\r\nEND\r\n",
        'a NUL in the key'  => "VALUE a\0b 0 1\r\nx\r\nEND\r\n",
        'LF without CR'     => "VALUE a 0 1\nx\r\nEND\r\n",
        'over 1 GiB'        => "VALUE a 0 1073741825\r\nEND\r\n",
        'five fields'       => "VALUE a 0 1 2 3\r\nx\r\nEND\r\n",
        'a letter in flags' => "VALUE a 0x 1\r\nx\r\nEND\r\n",
        'a 3000-byte line'  => 'VALUE ' . ('b' x 3000),
    );
    for my $name (sort keys %good) {
        my $parsed = eval { response_values($good{$name}) } || "died: $@";
        my $stored = eval { stored_items($good{$name}) } || "died: $@";
        is_deeply $stored, $parsed, "stored_items reads as the parser: $name";
    }
    for my $name (sort keys %bad) {
        ok !eval { response_values($bad{$name}); 1 }, "the parser refuses $name";
        (my $parser_why = $@) =~ s/\Anot a get response: //;
        ok !eval { stored_items($bad{$name}); 1 }, '... and so does stored_items';
        (my $why = $@) =~ s/\Anot a memcached get response: (.*) \('.*\z/$1\n/s;
        is $why, $parser_why, '... saying why as the parser does';
    }
    my $gzip = Compress::Zlib::memGzip('hello ' x 10);
    my $compressed = "VALUE z 3 " . length($gzip) . "\r\n$gzip\r\nEND\r\n";
    is_deeply response_values($compressed), [ [ z => 1, 'hello ' x 10 ] ],
        'response_values: a compressed value decoded, flag 2 cleared';
    is_deeply stored_items($compressed), [ [ z => 3, $gzip ] ], 'stored_items: as stored';
    {
        no warnings 'once';
        local $Cache::Memcached::RustXS::Zlib::MaxOutput = 10;
        is_deeply response_values($compressed), [], 'response_values: a value over MaxOutput dropped';
        is_deeply stored_items($compressed), [ [ z => 3, $gzip ] ], 'stored_items: kept, as stored';
    }
    is_deeply stored_items("VALUE a 0 1\r\nx\r\nVALUE a 4 1\r\ny\r\nEND\r\n"), [ [ a => 0, 'x' ], [ a => 4, 'y' ] ],
        'stored_items: a key that comes twice, twice';
    ok !eval { response_values("VALUE a 0 1\r\nx\r\nVALUE a 4 1\r\ny\r\nEND\r\n"); 1 },
        'response_values refuses a key that comes twice';
    like $@, qr/flags cannot be told apart/, '... saying why';
}

done_testing;
