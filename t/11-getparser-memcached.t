#!/usr/bin/perl
# Cache::Memcached::RustXS::GetParser as the parser_class of a real
# Cache::Memcached 1.30 against real memcached servers; every result is
# compared with what was set and with the pure-Perl Cache::Memcached::GetParser.
use strict;
use warnings;

use lib 't/lib';
use Compress::Zlib ();
use Digest::MD5 qw(md5_hex);
use Encode ();
use File::Temp ();
use IO::Select ();
use IO::Socket::INET ();
use Test::More;

use Cache::Memcached::RustXS::GetParser;
use CMRXTest::Clients qw(cache_memcached_missing cache_memcached);
use CMRXTest::Keys qw(server_for);
use CMRXTest::Memcached;
use CMRXTest::Raw qw(raw_set raw_get);

plan skip_all => cache_memcached_missing() if cache_memcached_missing();

my $RUST = 'Cache::Memcached::RustXS::GetParser';
my $PERL = 'Cache::Memcached::GetParser';
my $NS   = 'cmrx11:';

# Before any test: three ordinary servers and one for a 20 MB item.
my @servers = CMRXTest::Memcached->start_or_skip(count => 3);
my $big_server = CMRXTest::Memcached->start_or_skip(args => [qw(-I 32m -m 256)]);
my @addrs = map { $_->address } @servers;

my %CLIENT = (servers => \@addrs, namespace => $NS, select_timeout => 5);
my $rust = cache_memcached(%CLIENT);
my $perl = cache_memcached(%CLIENT, parser_class => $PERL);

# Keys whose values differ between two result hashes (missing counts).
sub mismatches {
    my ($got, $want) = @_;
    my %all = (%$got, %$want);
    return [ sort grep {
        !exists $got->{$_} || !exists $want->{$_}
          || (defined $got->{$_} xor defined $want->{$_})
          || (defined $got->{$_} && $got->{$_} ne $want->{$_})
    } keys %all ];
}

sub raw_set_everywhere {    # same item on all three servers: no mapping needed
    my ($key, $flags, $data) = @_;
    return @addrs == grep { raw_set($_, "$NS$key", $flags, $data) } @addrs;
}
sub stored_flags_and_length {    # of a key, as the server holds it
    my ($key) = @_;
    my ($flags, $data) = raw_get(server_for($rust, $key), "$NS$key");
    return defined $flags ? ($flags, length $data) : ();
}

# ---- ~400 binary values over 3 servers -----------------------------------------

srand(20240611);
my @nasty = ("\r\nEND\r\n", "VALUE ${NS}k0 0 5\r\n", "\0", "\r\n", "END", "\n");
my %want;
for my $i (0 .. 399) {
    my $v = join '', map { chr int rand 256 } 1 .. int rand 2000;
    substr($v, int rand(length($v) + 1), 0, $nasty[ rand @nasty ]) for 1 .. 3;
    $want{"bin$i"} = $v;
}
$want{"empty$_"} = '' for 1 .. 3;    # 0-byte values among them
is scalar(grep { $rust->set($_, $want{$_}) } keys %want), scalar keys %want,
    'all ' . keys(%want) . ' binary values set';
{
    my %per;
    $per{ server_for($rust, $_) }++ for keys %want;
    ok !grep({ ($per{$_} // 0) < 80 } @addrs),
        'keys spread over all three servers (' . join('/', map { $per{$_} // 0 } @addrs) . ')';
}
my $got_rust = $rust->get_multi(keys %want);
is_deeply mismatches($got_rust, \%want), [], 'get_multi: every value as set';
is scalar keys %$got_rust, scalar keys %want, 'get_multi: no extra keys';
my $got_perl = $perl->get_multi(keys %want);
is_deeply mismatches($got_perl, \%want), [], 'pure-Perl parser agrees with the set values';
is_deeply mismatches($got_rust, $got_perl), [], 'RustXS == pure-Perl, key for key';
is_deeply [ grep { ($rust->get($_) // "\x{100}") ne $want{$_} } (sort keys %want)[0 .. 49] ],
    [], 'get of 50 keys one by one';
ok defined $got_rust->{empty1} && $got_rust->{empty1} eq '', '0-byte value is defined and empty';
is $rust->get('empty2'), '', 'get of a 0-byte value';
ok !exists $rust->get_multi('nothere')->{nothere}, 'a miss does not exist';

# ---- UTF-8 keys -------------------------------------------------------------

{
    my $chars = "cl\x{e9}-\x{43a}\x{43b}\x{44e}\x{447}";    # a character string
    my $bytes = Encode::encode_utf8("b\x{f6}rse-\x{6771}\x{4eac}");
    ok $rust->set($chars, "char key") && $rust->set($bytes, "byte key"), 'set UTF-8 keys';
    my $char_get = $rust->get($chars);
    is $char_get, $perl->get($chars), 'get with a character-string key: as with the pure-Perl parser';
  SKIP: {
        # Before 1.27 get looks the result up under the character string,
        # not under the bytes that come back: a miss whatever the parser.
        skip "Cache::Memcached $Cache::Memcached::VERSION: get of a character-string key "
           . 'is a miss (fixed in 1.27)', 1 if Cache::Memcached->VERSION < 1.27;
        is $char_get, 'char key', 'get with a character-string key';
    }
    is $rust->get($bytes), 'byte key', 'get with a UTF-8 byte key';
    my $multi = $rust->get_multi($chars, $bytes);
    is $multi->{$bytes}, 'byte key', 'get_multi: keyed by the UTF-8 bytes';
    is $multi->{ Encode::encode_utf8($chars) }, 'char key', 'character key comes back as bytes';
    is_deeply $multi, $perl->get_multi($chars, $bytes), 'same as pure-Perl';
}

# ---- Storable values and compressed values ---------------------------------

my $czip = cache_memcached(%CLIENT, compress_threshold => 100);
{
    my $text  = join ' ', map { "line $_ of some compressible text" } 1 .. 300;
    my $ref   = { list => [ 1 .. 5, "\0\r\nEND\r\n" ], name => "n\x{e9}" };
    my $bigref = { map { ("key$_" => "value $_ " x 20) } 1 .. 50 };
    my %item = (st => $ref, cz => $text, both => $bigref, small => 'tiny');
    ok $czip->set($_, $item{$_}), "set $_" for sort keys %item;

    my %flags = map { $_ => (stored_flags_and_length($_))[0] } keys %item;
    is_deeply \%flags, { st => 1, cz => 2, both => 3, small => 0 },
        'stored with F_STORABLE / F_COMPRESS / both / none';
    ok +(stored_flags_and_length('cz'))[1] < length($text) / 2, 'cz really stored compressed';

    for my $c ([ 'RustXS' => $rust ], [ 'pure-Perl' => $perl ], [ 'RustXS, compressing client' => $czip ]) {
        my ($name, $memd) = @$c;
        is_deeply $memd->get_multi(keys %item), \%item, "$name: get_multi of Storable/compressed values";
    }
    is_deeply $rust->get('both'), $bigref, 'get of a compressed Storable value';
}

# ---- flag values set raw: 2^32-1 and other high bits ------------------------------

ok raw_set_everywhere('flagmax', 4294967295, 'abc'), 'raw set with flags 4294967295';
ok raw_set_everywhere('flaghi', 4294967292, 'xyz'), 'raw set with flags 4294967292';
{   # a plain parser object on a raw socket shows the flags as received
    my $sock = IO::Socket::INET->new(PeerAddr => $addrs[0], Timeout => 5) or die $@;
    $sock->blocking(0);
    syswrite $sock, "get ${NS}flagmax ${NS}flaghi\r\n";
    my (%dest, %seen);
    my $parser = $RUST->new(\%dest, length $NS, sub { %seen = (%seen, %{ $_[0] }) });
    my ($rv, $sel) = (0, IO::Select->new($sock));
    $rv = $parser->parse_from_sock($sock) while $rv == 0 && $sel->can_read(5);
    is $rv, 1, 'raw get parsed';
    is_deeply \%seen, { flagmax => 4294967295, flaghi => 4294967292 },
        'flags up to 2^32-1 reach on_item (flag 2 kept: "abc" is not gzip)';
    is_deeply \%dest, { flagmax => "abc\r\n", flaghi => "xyz\r\n" }, 'values as sent';
}
is $rust->get('flaghi'), 'xyz', 'Cache::Memcached: high flags without bits 1|2';
{
    my ($from_rust, $from_perl) = map { $_->get_multi('flagmax', 'flaghi') } $rust, $perl;
    is_deeply [ exists $from_rust->{flagmax}, defined $from_rust->{flagmax} ],
              [ exists $from_perl->{flagmax}, defined $from_perl->{flagmax} ],
        'flags 2^32-1 (bad gzip + Storable bits): same outcome as pure-Perl';
    is_deeply $from_rust, $from_perl, 'same result hash as pure-Perl';
}

# ---- a corrupt compressed value next to good ones ---------------------------

{
    my $gz = Compress::Zlib::memGzip('good ' x 100);
    ok raw_set_everywhere('corrupt', 2, substr($gz, 0, 12) . ('#' x 30)), 'raw set corrupt gzip, flag 2';
    ok raw_set_everywhere('rawgood', 2, $gz), 'raw set good gzip, flag 2';
    ok $czip->set('cgood', 'fine ' x 100) && $czip->set('pgood', 'plain'), 'set good neighbours';
    my @k = qw(corrupt rawgood cgood pgood);
    my ($from_rust, $from_perl) = map { $_->get_multi(@k) } $rust, $perl;
    is_deeply [ exists $from_perl->{corrupt}, defined $from_perl->{corrupt} ], [ 1, '' ],
        'pure-Perl: corrupt value present as undef';
    is_deeply [ exists $from_rust->{corrupt}, defined $from_rust->{corrupt} ],
              [ exists $from_perl->{corrupt}, defined $from_perl->{corrupt} ],
        'RustXS: the same (present, undef)';
    is_deeply $from_rust, { corrupt => undef, rawgood => 'good ' x 100,
                            cgood => 'fine ' x 100, pgood => 'plain' },
        'good neighbours intact';
    is_deeply $from_rust, $from_perl, 'same result hash as pure-Perl';
    ok !defined $rust->get('corrupt'), 'get of the corrupt value: undef';
}

# ---- a 20 MB value, and what it costs in memory -----------------------------------

my $big_addr = $big_server->address;
my $block = join '', map { chr int rand 256 } 1 .. 1_000_000;
my $big = join '', map { "[$_]\r\nEND\r\n" . $block } 1 .. 20;
my $big_md5 = md5_hex($big);
{
    my $big_client = cache_memcached(%CLIENT, servers => [$big_addr]);
    ok $big_client->set('big', $big), 'set a ' . length($big) . '-byte value';
    ok $big_client->set('small', 'warm'), 'and a small one';
    my $got = $big_client->get('big');
    ok defined $got && length($got) == length($big) && md5_hex($got) eq $big_md5,
        'get returns the 20 MB value intact';
    my $multi = $big_client->get_multi('big', 'small');
    ok md5_hex($multi->{big}) eq $big_md5 && $multi->{small} eq 'warm',
        'get_multi of the 20 MB value and a small one';
    is md5_hex(cache_memcached(%CLIENT, parser_class => $PERL, servers => [$big_addr])->get('big')), $big_md5,
        'pure-Perl parser reads the same';
}

# Peak RSS (VmHWM) growth of reading the 20 MB value, measured in a fresh
# perl so nothing earlier in this test inflates the high-water mark. The
# child warms up (modules loaded, connected, a small get) before measuring.
my $child = File::Temp->new(SUFFIX => '.pl');
print {$child} <<'CHILD';
use strict; use warnings;
use Cache::Memcached; use Cache::Memcached::RustXS::GetParser; use Digest::MD5 qw(md5_hex);
my ($addr, $parser, $how) = @ARGV;
sub hwm_kb { open my $f, '<', '/proc/self/status' or die $!;
             while (<$f>) { return $1 if /^VmHWM:\s+(\d+)\s+kB/ } die "no VmHWM" }
my $memd = Cache::Memcached->new({ servers => [$addr], namespace => 'cmrx11:',
                                   parser_class => $parser, select_timeout => 5 });
$memd->get('small') eq 'warm' or die "warm-up get failed";
my $before = hwm_kb();
my $result = $how eq 'get' ? { big => $memd->get('big') } : $memd->get_multi('big');
my $after = hwm_kb();    # (get_multi: the hash is kept, its value not copied)
printf "delta_kb=%d md5=%s\n", $after - $before,
    defined $result->{big} ? md5_hex($result->{big}) : 'undef';
CHILD
close $child;
sub growth_mb {    # (parser, 'get' | 'get_multi') -> VmHWM growth in MB
    my ($parser, $how) = @_;
    my $out = `"$^X" -Mblib "$child" $big_addr $parser $how 2>&1`;
    my ($kb, $md5) = $out =~ /\Adelta_kb=(-?\d+) md5=(\S+)/ or diag $out;
    is $md5, $big_md5, "fresh process, $how via $parser: value intact";
    return defined $kb ? $kb / 1024 : 9e9;
}
my %mb = map { ("$_->[0] $_->[1]" => growth_mb(@$_)) }
    [ $RUST, 'get' ], [ $RUST, 'get_multi' ], [ $PERL, 'get' ];
diag sprintf "VmHWM growth reading 20 MB: RustXS get %.1f MB, get_multi %.1f MB; pure-Perl get %.1f MB",
    @mb{"$RUST get", "$RUST get_multi", "$PERL get"};
ok $mb{"$RUST get"} < 60, 'RustXS: peak RSS growth of a 20 MB get < 60 MB (3 copies)';
ok $mb{"$RUST get_multi"} < 30, 'RustXS: get_multi of 20 MB costs about one copy (< 30 MB)';
ok $mb{"$RUST get"} < $mb{"$PERL get"} + 5,
    'RustXS: get of 20 MB costs no more than pure-Perl (within 5 MB)';
# Without slack in the stored buffer perl shares the string copy-on-write
# when Cache::Memcached::get returns it, as it does the pure-Perl parser's.
# Perls without copy-on-write (before 5.20) copy it there, whatever parser
# made it: two copies.
my $cow = eval {
    require B;
    my $x = 'c' x 100;
    my $y = $x;
    B->can('SVf_IsCOW') && B::svref_2object(\$y)->FLAGS & B::SVf_IsCOW();
};
SKIP: {
    skip sprintf('this perl has no copy-on-write (5.20 and later do): '
        . 'returning a string copies it (pure-Perl get: %.1f MB)', $mb{"$PERL get"}), 1
        unless $cow;
    ok $mb{"$RUST get"} < 30, 'RustXS: get of 20 MB costs about one copy (< 30 MB), as pure-Perl';
}

done_testing;
