#!/usr/bin/perl
# Unit tests of Cache::Memcached::RustXS::GetParser on its own, no memcached:
# responses are fed with parse_from_string, or written into a socketpair and
# read with parse_from_sock. The parser's POD (THE CONTRACT) is the spec.
use strict;
use warnings;

use lib 't/lib';
use Compress::Zlib ();
use File::Temp ();
use Test::More;

use Cache::Memcached::RustXS::GetParser;
use CMRXTest::Protocol qw(value_item nonblocking pair);

my $CLASS = 'Cache::Memcached::RustXS::GetParser';

# ---- helpers -----------------------------------------------------------------

# A parser writing into a fresh hash and recording every on_item call (each
# call's hashref copied, so later changes cannot hide what was passed).
sub recorder {
    my ($nslen) = @_;
    my (%dest, @calls);
    my $p = $CLASS->new(\%dest, $nslen // 0, sub { push @calls, { %{ $_[0] } } });
    return ($p, \%dest, \@calls);
}

# Feed the chunks one parse_from_string call each. Returns a summary: the
# results of all calls, dest, the on_item calls merged into one key => flags
# map, and current_key at the end.
sub feed {
    my ($nslen, @chunks) = @_;
    my ($p, $dest, $calls) = recorder($nslen);
    my @rv = map { $p->parse_from_string($_) } @chunks;
    return { rv => \@rv, last => $rv[-1], dest => $dest, calls => $calls,
             seen => { map { %$_ } @$calls }, current_key => $p->current_key };
}

# ---- values under key minus namespace, with CRLF; on_item batched ------------

{
    my $resp = value_item('ns:alpha', 0, 'abc') . value_item('ns:beta', 5, 'xy')
             . "END\r\n";
    my $r = feed(3, $resp);
    is $r->{last}, 1, 'a complete response returns 1';
    is_deeply $r->{dest}, { alpha => "abc\r\n", beta => "xy\r\n" },
        'values stored under key minus namespace, with trailing CRLF';
    is_deeply $r->{calls}, [ { alpha => 0, beta => 5 } ],
        'on_item called once, batched as { key => flags }';
    is $r->{current_key}, undef, 'current_key is undef after END';
}

{   # an on_item that keeps the hashes it was given sees them unchanged later
    my (%dest, @kept);
    my $p = $CLASS->new(\%dest, 0, sub { push @kept, $_[0] });
    $p->parse_from_string(value_item('a', 1, 'x') . value_item('b', 1, 'y'));
    $p->parse_from_string(value_item('c', 7, 'z') . "END\r\n");
    is_deeply \@kept, [ { a => 1, b => 1 }, { c => 7 } ],
        'kept on_item hashes are not reused or changed by later calls';
}

# ---- binary data, 0 bytes, big flags, cas, UTF-8 keys --------------------------

my $nul_bin  = join '', map { chr } 0 .. 255;
my %binary = (
    nuls     => "\0\0a\0b\0\0",
    fake_end => "x\r\nEND\r\ny",
    fake_val => "VALUE x 0 1\r\nz\r\nEND\r\n",
    all      => $nul_bin x 3,
    empty    => '',
);
{
    my $resp = join('', map { value_item($_, 0, $binary{$_}) } sort keys %binary)
             . "END\r\n";
    my $r = feed(0, $resp);
    is $r->{last}, 1, 'binary response complete';
    is_deeply $r->{dest}, { map { $_ => "$binary{$_}\r\n" } keys %binary },
        'NULs, "\r\nEND\r\n", "VALUE ..." text and a 0-byte value kept exact';
    is_deeply $r->{seen}, { map { $_ => 0 } keys %binary }, 'all reported';
}
{
    my $utf8_key = "cl\x{e9}_\x{43f}\x{440}";    # é and Cyrillic
    utf8::encode(my $key_bytes = $utf8_key);
    my $resp = value_item('big', 4294967295, 'f') . value_item('c', 7, 'cas', 12345678901234)
             . value_item($key_bytes, 1, 'u') . "END\r\n";
    my $r = feed(0, $resp);
    is $r->{last}, 1, 'response with cas field and UTF-8 key complete';
    is $r->{seen}{big}, 4294967295, 'flags 4294967295 (2^32-1) accepted';
    is $r->{dest}{c}, "cas\r\n", 'a VALUE line with a cas field is accepted';
    ok exists $r->{dest}{$key_bytes}, 'UTF-8 key stored as its UTF-8 bytes';
    is $r->{seen}{$key_bytes}, 1, 'and reported with its flags';
}

# ---- gzip'd values are gunzipped, flag 2 cleared -----------------------------

my $plain = join ' ', map { "word$_" } 1 .. 500;
my $gz    = Compress::Zlib::memGzip($plain);
{
    my $resp = value_item('z2', 2, $gz) . value_item('z3', 3, $gz)
             . value_item('z_hi', 0x80000002, $gz) . "END\r\n";
    my $r = feed(0, $resp);
    is $r->{last}, 1, 'compressed response complete';
    is $r->{dest}{$_}, "$plain\r\n", "$_: arrives decompressed, with CRLF"
        for qw(z2 z3 z_hi);
    is_deeply $r->{seen}, { z2 => 0, z3 => 1, z_hi => 0x80000000 },
        'flag bit 2 cleared, the other bits kept (3 -> 1)';
}
{
    my $corrupt = substr($gz, 0, 10) . ('#' x 40);    # good header, bad deflate
    my $resp = value_item('bad', 2, $corrupt) . value_item('good', 2, $gz)
             . value_item('notgz', 3, 'plain text') . "END\r\n";
    my $r = feed(0, $resp);
    is $r->{last}, 1, 'a corrupt gzip value does not fail the response';
    is $r->{dest}{bad},   "$corrupt\r\n",   'corrupt gzip left as it came';
    is $r->{dest}{notgz}, "plain text\r\n", 'non-gzip data with flag 2 left as it came';
    is $r->{dest}{good},  "$plain\r\n",     'the good value next to it is gunzipped';
    is_deeply $r->{seen}, { bad => 2, good => 0, notgz => 3 },
        'failed values keep flag 2 (finalize decides), the good one loses it';
}

# ---- dribbled input gives the same result as one shot --------------------------

{
    my $resp = value_item('ns:a', 0, $binary{fake_end}) . value_item('ns:b', 2, $gz)
             . value_item('ns:c', 9, '', 77) . value_item('ns:d', 0, $nul_bin)
             . "END\r\n";
    my $one = feed(3, $resp);
    my $dribbled = feed(3, split //, $resp);
    is $dribbled->{last}, 1, 'one byte per call: complete';
    ok !grep({ $_ != 0 } @{ $dribbled->{rv} }[ 0 .. $#{ $dribbled->{rv} } - 1 ]),
        'every call before the last returned 0';
    is_deeply $dribbled->{dest}, $one->{dest}, 'one byte per call: same values';
    is_deeply $dribbled->{seen}, $one->{seen}, 'one byte per call: same flags';
    ok @{ $dribbled->{calls} } >= 4, 'on_item ran once per call that finished values';

    for my $cut (1 .. 4) {    # END\r\n split at every position
        my $split = feed(3, substr($resp, 0, -$cut), substr($resp, -$cut));
        is_deeply [ @{ $split->{rv} }, $split->{dest} ], [ 0, 1, $one->{dest} ],
            "END split $cut byte(s) from the end: 0 then 1, same values";
    }
}

# ---- errors: -1 at once, nothing partial, finished values reported -------------

my $done = value_item('ns:ok1', 0, "one\0") . value_item('ns:ok2', 2, $gz);
my %done_dest = (ok1 => "one\0\r\n", ok2 => "$plain\r\n");
my %done_seen = (ok1 => 0, ok2 => 0);
my @errors = (
    [ 'SERVER_ERROR'         => "SERVER_ERROR out of memory\r\n" ],
    [ 'CLIENT_ERROR'         => "CLIENT_ERROR bad data chunk\r\n" ],
    [ 'ERROR'                => "ERROR\r\n" ],
    [ 'unknown line'         => "STORED\r\n" ],
    [ 'non-numeric length'   => "VALUE ns:k 0 12x\r\n" ],
    [ 'length over 1 GiB'    => "VALUE ns:k 0 1073741825\r\n" ],
    [ 'huge length'          => "VALUE ns:k 0 99999999999999999999999\r\n" ],
    [ 'flags = 2^32'         => "VALUE ns:k 4294967296 1\r\n" ],
    [ 'bad terminator'       => "VALUE ns:k 0 3\r\nabcXY" ],
    [ 'LF-only terminator'   => "VALUE ns:k 0 3\r\nabc\n\r" ],
    [ 'endless line'         => 'SERVER_ERROR ' . ('x' x 2100) ],
    [ 'bytes after END'      => "END\r\nVALUE" ],
);
for my $case (@errors) {
    my ($name, $bad) = @$case;
    my $r = feed(3, $done . $bad);
    is $r->{last}, -1, "$name: -1 at once, no more input needed";
    is_deeply $r->{dest}, \%done_dest, "$name: nothing partial in dest";
    is_deeply $r->{seen}, \%done_seen, "$name: finished values already through on_item";
}
{   # the endless line again, arriving in pieces: the call crossing 2 KiB fails
    my $r = feed(0, 'SERVER_ERROR ', 'x' x 1000, 'x' x 1100);
    is_deeply $r->{rv}, [ 0, 0, -1 ], 'endless line: fails when it passes 2 KiB';
}
{   # the value in progress is dropped; the parser stays failed
    my ($p, $dest, $calls) = recorder(3);
    is $p->parse_from_string($done . "VALUE ns:part 0 10\r\nhalf"), 0, 'mid-value: 0';
    is $p->current_key, 'part', 'current_key: the value in progress, minus namespace';
    is $p->parse_from_string("SERVER_ERROR x\r\n"), -1, 'then an error: -1';
    is_deeply $dest, \%done_dest, 'the half value is not in dest';
    is $p->parse_from_string(value_item('ns:z', 0, 'z') . "END\r\n"), -1,
        'after -1 it keeps returning -1';
    ok !exists $dest->{z}, 'and parses nothing more';
    is $p->current_key, 'part', 'current_key after -1: the dropped value';
}

# ---- parse_from_sock on a socketpair ----------------------------------------

{
    my ($r, $w) = pair();
    my ($p, $dest, $calls) = recorder(3);
    is $p->parse_from_sock($r), 0, 'empty non-blocking socket (EAGAIN): 0';
    is_deeply $calls, [], 'no on_item call when nothing finished';

    my $resp = $done . value_item('ns:bin', 0, $binary{fake_val}) . "END\r\n";
    syswrite $w, substr($resp, 0, 20);
    is $p->parse_from_sock($r), 0, 'part of a response: 0';
    is $p->current_key, 'ok1', 'current_key while reading ok1';
    syswrite $w, substr($resp, 20);
    is $p->parse_from_sock($r), 1, 'the rest: 1';
    is_deeply $dest, { %done_dest, bin => "$binary{fake_val}\r\n" },
        'socket: same values as parse_from_string';
    is $p->parse_from_sock($r), 1, 'after 1 it keeps returning 1';
}
{   # writer closed mid-value
    my ($r, $w) = pair();
    my ($p, $dest, $calls) = recorder(3);
    syswrite $w, $done . "VALUE ns:cut 0 100\r\n" . ('c' x 50);
    is $p->parse_from_sock($r), 0, 'mid-value: 0';
    close $w;
    is $p->parse_from_sock($r), -1, 'writer closed mid-value: -1';
    is_deeply $dest, \%done_dest, 'nothing partial; finished values kept';
    is_deeply { map { %$_ } @$calls }, \%done_seen, 'and passed to on_item';
}
{   # closed after complete values but before END. (A short read may end a
    # call with 0, as Cache::Memcached's select then reports the EOF: so
    # call until the parser decides, at most a few times.)
    my ($r, $w) = pair();
    my ($p, $dest, $calls) = recorder(3);
    syswrite $w, $done;
    close $w;
    my ($rv, $n) = (0, 0);
    $rv = $p->parse_from_sock($r) while $rv == 0 && ++$n <= 3;
    is $rv, -1, "closed before END: -1 (after $n call(s))";
    is_deeply [ $dest, { map { %$_ } @$calls } ], [ \%done_dest, \%done_seen ],
        'values finished before the close are stored and passed to on_item';
}
{   # a large value (read straight into its scalar) interleaved with writes
    my ($r, $w) = pair();
    nonblocking($w);
    my $big  = join '', map { chr(($_ * 7919) % 256) } 1 .. 3_000_000;
    my $resp = value_item('small', 0, 's') . value_item('big', 0, $big)
             . value_item('tail', 0, "\r\nEND\r\n") . "END\r\n";
    my ($p, $dest) = recorder(0);
    my ($off, $rv, $rounds) = (0, 0, 0);
    while ($rv == 0 && $rounds++ < 100_000) {
        if ($off < length $resp) {
            my $put = syswrite $w, $resp, 65536, $off;
            $off += $put if $put;
        }
        $rv = $p->parse_from_sock($r);
    }
    is $rv, 1, '3 MB value through a socket: 1';
    ok $dest->{big} eq "$big\r\n", '3 MB value intact';
    is_deeply [ @$dest{qw(small tail)} ], [ "s\r\n", "\r\nEND\r\n\r\n" ],
        'values around it intact';
}

# ---- subclassing, argument checks -----------------------------------------

{
    package My::Parser;
    our @ISA = ('Cache::Memcached::RustXS::GetParser');
    sub new {
        my ($class, @args) = @_;
        my $self = $class->SUPER::new(@args);
        $self->{mine} = 'field';
        return $self;
    }
    sub hello { "hello from " . ref $_[0] }
}
{
    my %dest;
    my $p = My::Parser->new(\%dest, 0, sub { });
    isa_ok $p, 'My::Parser';
    isa_ok $p, $CLASS;
    is $p->hello, 'hello from My::Parser', 'subclass method works';
    is $p->{mine}, 'field', 'subclass field in the hash works';
    is $p->parse_from_string(value_item('k', 0, 'v') . "END\r\n"), 1,
        'subclass parses';
    is $dest{k}, "v\r\n", 'into dest';
}
like eval { $CLASS->new([], 0, sub { }); 1 } ? '' : $@,
    qr/hash reference/, 'new croaks on a non-hash dest';
like eval { $CLASS->new('x', 0, sub { }); 1 } ? '' : $@,
    qr/hash reference/, 'new croaks on a non-reference dest';
like eval { $CLASS->new({}, 0, 'main::foo'); 1 } ? '' : $@,
    qr/code reference/, 'new croaks on a non-code on_item';
like eval { $CLASS->new({}, 0, {}); 1 } ? '' : $@,
    qr/code reference/, 'new croaks on a hash as on_item';

# ---- get_response_items: the items of a whole response, as stored ---------------

{
    my $items_of = \&Cache::Memcached::RustXS::GetParser::get_response_items;
    my $gz   = Compress::Zlib::memGzip('gzip me ' x 20);
    my $resp = value_item('k1', 2, $gz) . value_item('k2', 4294967295, "a\r\nEND\r\nVALUE x 0 1\r\n\0", 18446744073709551615)
             . value_item('k1', 0, '') . "END\r\n";
    my @want = ([ k1 => 2, $gz, undef ], [ k2 => 4294967295, "a\r\nEND\r\nVALUE x 0 1\r\n\0", 18446744073709551615 ],
                [ k1 => 0, '', undef ]);
    is_deeply [ $items_of->($resp) ], [ \@want, 1 ],
        'get_response_items: each item as stored (gzip with its flag 2, protocol in data, the largest flags '
        . 'and cas, a key twice, an empty value), and END seen';
    # Every start of the response: the items whole in it, not complete, as a
    # parser object says 0 to it (one test for all the cuts).
    my $flat = sub { join "\0", map { join '|', map { defined($_) ? $_ : 'undef' } @$_ } @{ $_[0] } };
    my @cuts = grep { my $cut = $_;
        my ($items, $complete) = $items_of->(substr $resp, 0, $cut);
        my $whole = grep { length(join '', map { value_item(@$_) } @want[0 .. $_ - 1]) <= $cut } 1 .. @want;
        $complete || $CLASS->new(\my %d, 0)->parse_from_string(substr $resp, 0, $cut) != 0
            || $flat->($items) ne $flat->([ @want[0 .. $whole - 1] ]);
    } 0 .. length($resp) - 1;
    is_deeply \@cuts, [], '... every start of it: the whole items so far, not complete, as the parser reads it';

    my $huge = "VALUE big 0 1073741824\r\n" . ('x' x 100);
    is_deeply [ $items_of->($huge) ], [ [], 0 ], 'a 1 GiB claim with 100 bytes: nothing yet, nothing allocated for it';
    is_deeply [ $items_of->(undef) ], [ [], 0 ], 'undef: the empty start of a response';

    my $utf8 = "VALUE caf\xe9 0 2\r\n\xe9t\r\nEND\r\n";
    utf8::upgrade($utf8);
    is_deeply [ $items_of->($utf8) ], [ [ [ "caf\xe9", 0, "\xe9t", undef ] ], 1 ],
        'a UTF-8-flagged response of bytes: read as those bytes';
    ok !eval { $items_of->("VALUE a 0 2\r\n\x{263a}\r\nEND\r\n"); 1 }, 'wide characters: croaks';
    like $@, qr/\AWide character in get_response_items at /, '... saying so';

    my %bad = (
        "VALUE a 0 1\r\nxyEND\r\n"                 => qr/data block not followed by \\r\\n \('the two bytes after the value of a'\)/,
        "VALUE a 0 1\r\nx\r\nSERVER_ERROR busy\r\n" => qr/server replied SERVER_ERROR \('SERVER_ERROR busy'\)/,
        "VALUE a\0b 0 1\r\nx\r\nEND\r\n"           => qr/bad key in VALUE line \('VALUE a\\x00b 0 1'\)/,
        "END\r\nEND\r\n"                           => qr/bytes after END \('END'\)/,
        'VALUE ' . ('b' x 3000)                    => qr/bad key in VALUE line \('VALUE b{74}'\)/,
    );
    for my $response (sort keys %bad) {
        ok !eval { $items_of->($response); 1 }, 'croaks on ' . substr($response, 0, 30);
        like $@, qr/\Anot a memcached get response: $bad{$response} at /, '... saying why and where';
    }
}

# ---- taint: values read from a socket, and items of a tainted response, are tainted under -T

{
    my $child = <<'CHILD';
use strict; use warnings;
use Socket qw(AF_UNIX SOCK_STREAM PF_UNSPEC);
use Fcntl qw(F_GETFL F_SETFL O_NONBLOCK);
use Scalar::Util qw(tainted);
use Cache::Memcached::RustXS::GetParser;
socketpair(my $r, my $w, AF_UNIX, SOCK_STREAM, PF_UNSPEC) or die $!;
fcntl($r, F_SETFL, fcntl($r, F_GETFL, 0) | O_NONBLOCK) or die $!;
my $gz = Compress::Zlib::memGzip('z' x 100);
syswrite $w, "VALUE a 0 3\r\nabc\r\nVALUE z 2 " . length($gz) . "\r\n$gz\r\nEND\r\n";
my %d;
my $p = Cache::Memcached::RustXS::GetParser->new(\%d, 0, sub {});
my $rv = $p->parse_from_sock($r);
my $resp = "VALUE a 0 3\r\nabc\r\nEND\r\n";
my ($tainted) = Cache::Memcached::RustXS::GetParser::get_response_items($resp . substr($ENV{PATH}, 0, 0));
my ($clean) = Cache::Memcached::RustXS::GetParser::get_response_items($resp);
print "taint=${^TAINT} rv=$rv a=", tainted($d{a}) ? 1 : 0,
      " z=", tainted($d{z}) ? 1 : 0, " ok=", ($d{z} eq ('z' x 100) . "\r\n" ? 1 : 0),
      " items=", (grep { tainted($_) } @{ $tainted->[0] }) + 0, "/", (grep { tainted($_) } @{ $clean->[0] }) + 0, "\n";
CHILD
    my $tmp = File::Temp->new(SUFFIX => '.pl');
    print {$tmp} $child;
    close $tmp;
    # This test's @INC (blib first) as -I switches, not -Mblib: blib.pm 1.04
    # (perl 5.10.1) puts getcwd()'s tainted result into @INC, and under -T
    # every later require then dies "Insecure dependency in require".
    my $inc = join ' ', map { qq{"-I$_"} } grep { !ref } @INC;
    my $out = `"$^X" -T $inc -MCompress::Zlib "$tmp" 2>&1`;
    is $out, "taint=1 rv=1 a=1 z=1 ok=1 items=4/0\n",
        'under -T: values (plain and gunzipped) are tainted, as sysread data; get_response_items\' '
        . 'items are when the response is';
}

done_testing;
