#!/usr/bin/perl
# Inline finalize: when on_item is Cache::Memcached's own finalize, the
# parser finishes values with neither flag itself and hands the rest to
# finalize. For every kind of value a server can hold, get and get_multi
# must give exactly what they give with the inline path turned off
# ($InlineFinalize = 0) and with the pure-Perl parser.
use strict;
use warnings;

use lib 't/lib';
use Compress::Zlib ();
use Storable ();
use File::Temp ();
use Test::More;

use CMRXTest::Clients qw(cache_memcached_missing);
use Cache::Memcached::RustXS::GetParser;
use CMRXTest::Memcached;

# Everything here is about Cache::Memcached's own finalize.
plan skip_all => cache_memcached_missing() if cache_memcached_missing();
require Cache::Memcached;
require Cache::Memcached::GetParser;
use CMRXTest::Raw qw(raw_set);

my $RUST = 'Cache::Memcached::RustXS::GetParser';
my $NS   = 'inl:';

my $server = CMRXTest::Memcached->start_or_skip(args => ['-I', '2m']);
my $addr = $server->address;

my $text = join ' ', map { "value text $_" } 1 .. 300;
my %KINDS = (
    plain            => [ 0, 'hello world' ],
    empty            => [ 0, '' ],
    binary           => [ 0, "a\0b\r\nEND\r\nVALUE x 0 1\r\n\xff\x00" ],
    large            => [ 0, 'L' x 300_000 ],
    other_flag_bits  => [ 4 | 256, 'flags with bits finalize ignores' ],
    compressed       => [ 2, Compress::Zlib::memGzip($text) ],
    storable         => [ 1, Storable::nfreeze({ list => [ 1, 2, "\r\nEND\r\n" ] }) ],
    compressed_storable => [ 3, Compress::Zlib::memGzip(Storable::nfreeze([ 'deep', { a => 1 } ])) ],
    corrupt_gzip     => [ 2, "\x1f\x8b\x08\x00not really gzip at all" ],
    corrupt_storable => [ 1, 'this is not a Storable image' ],
    corrupt_both     => [ 3, "\x1f\x8b\x08\x00broken" ],
    gzip_of_garbage_storable => [ 3, Compress::Zlib::memGzip('not storable either') ],
);
for my $kind (sort keys %KINDS) {
    my ($flags, $data) = @{ $KINDS{$kind} };
    ok raw_set($addr, "$NS$kind", $flags, $data), "stored $kind with flags $flags";
}
my @keys = (sort(keys %KINDS), 'missing');

# A parser_class that remembers whether new() took the inline path.
{
    package InlineSpy;
    our @ISA = ('Cache::Memcached::RustXS::GetParser');
    our @inline;
    sub new {
        my $p = shift->SUPER::new(@_);
        push @inline, $p->inline_finalize;
        return $p;
    }
}

sub fetch_all {
    my ($class) = @_;
    my $memd = Cache::Memcached->new({
        servers => [$addr], namespace => $NS, parser_class => $class,
    });
    my %one = map { ($_ => [ $memd->get($_) ]) } @keys;
    return { multi => $memd->get_multi(@keys), one => \%one };
}

local $Storable::canonical = 1;
my $pure = fetch_all('Cache::Memcached::GetParser');
ok exists $pure->{multi}{corrupt_gzip}, 'the pure-Perl parser: a corrupt gzip value is a key with undef';
ok !exists $pure->{multi}{corrupt_storable}, '... a corrupt Storable value is no key';

my $INTERNALS = 'Cache::Memcached::RustXS::ClientInternals';
my $version   = $Cache::Memcached::VERSION;
my $read      = grep { $_ eq $version } @Cache::Memcached::RustXS::ClientInternals::CACHE_MEMCACHED_VERSIONS;
{
    local @InlineSpy::inline;
    my $inline = fetch_all('InlineSpy');
    my $taken = @InlineSpy::inline && !grep({ !$_ } @InlineSpy::inline);
    note "Cache::Memcached $version: the " . ($taken ? 'inline' : 'normal') . ' finalize path ran';
    if ($read) {
        ok $taken, "Cache::Memcached $version\'s finalize is recognised: the inline path is taken";
    } else {
        ok !grep({ $_ ne $InlineSpy::inline[0] } @InlineSpy::inline),
            "Cache::Memcached $version (not among the releases read): one path for every parser";
    }
    is_deeply $inline, $pure, 'get and get_multi give what the pure-Perl parser gives';
    for my $kind (sort keys %KINDS) {
        is_deeply $inline->{multi}{$kind}, $pure->{multi}{$kind}, "... $kind";
    }
}
{
    local @InlineSpy::inline;
    local $Cache::Memcached::RustXS::GetParser::InlineFinalize = 0;
    my $off = fetch_all('InlineSpy');
    ok @InlineSpy::inline && !grep({ $_ } @InlineSpy::inline),
        '$InlineFinalize = 0: the inline path is not taken';
    is_deeply $off, $pure, '... and get and get_multi give the same';
}
SKIP: {   # Recognised by its code, not by the version number.
    skip "Cache::Memcached $version is not among the releases read", 2 unless $read;
    local @InlineSpy::inline;
    local $Cache::Memcached::VERSION = '9.99';
    my $renumbered = fetch_all('InlineSpy');
    ok @InlineSpy::inline && !grep({ !$_ } @InlineSpy::inline),
        'the same finalize under another version number: still recognised';
    is_deeply $renumbered, $pure, '... and the same results';
}
SKIP: {   # A Cache::Memcached whose finalize is other code (a copy of the
          # client's file with one statement added to it): the normal path,
          # and the same results as the pure-Perl parser with that client.
    my $source = do { local (@ARGV, $/) = $INC{'Cache/Memcached.pm'}; <> };
    skip 'this Cache::Memcached has no finalize closure to change', 3
        unless $source =~ s/(my \$finalize = sub \{\n)/$1        my \$other_code = 1;\n/;
    my $dir = File::Temp::tempdir(CLEANUP => 1);
    mkdir "$dir/Cache" or die "mkdir: $!";
    open my $fh, '>', "$dir/Cache/Memcached.pm" or die "write: $!";
    print $fh $source;
    close $fh or die "close: $!";
    my $child = <<'CHILD';
use strict; use warnings;
use Cache::Memcached; use Cache::Memcached::GetParser; use Cache::Memcached::RustXS::GetParser;
use Storable ();
my ($addr, $ns, @keys) = @ARGV;
my @inline;
sub fetch {
    my ($class) = @_;
    my $memd = Cache::Memcached->new({ servers => [$addr], namespace => $ns, parser_class => $class });
    my %one = map { ($_ => [ $memd->get($_) ]) } @keys;
    return { multi => $memd->get_multi(@keys), one => \%one };
}
{ package Spy; our @ISA = ('Cache::Memcached::RustXS::GetParser');
  sub new { my $p = shift->SUPER::new(@_); push @inline, $p->inline_finalize; $p } }
local $Storable::canonical = 1;
my $pure = fetch('Cache::Memcached::GetParser');
my $spy  = fetch('Spy');
print Storable::freeze($pure) eq Storable::freeze($spy) ? 'same' : 'different', ' ',
      (grep { $_ } @inline) ? 'inline' : 'normal', ' ',
      Cache::Memcached::RustXS::ClientInternals::finalize_root() ? 'recognised' : 'unrecognised';
CHILD
    my @inc = map { "-I$_" } grep { !ref } @INC;
    open my $out, '-|', $^X, "-I$dir", @inc, '-e', $child, $addr, $NS, @keys or die "run: $!";
    my $said = do { local $/; <$out> };
    close $out;
    is $?, 0, 'a client whose finalize is other code: the child perl ran';
    like $said, qr/ unrecognised\z/, '... its finalize is not recognised';
    is $said, 'same normal unrecognised', '... the normal path ran, and get and get_multi give what the pure-Perl parser gives';
}
{
    my $known = eval "package Cache::Memcached; no strict 'refs'; my \$ret; sub { my \$map = \$_[0]; \$map = {\@_} unless ref \$map; }" or die $@;
    ok !$INTERNALS->can('is_known_finalize')->($known), 'is_known_finalize: another closure is not the finalize';
    ok $INTERNALS->can('finalize_root')->(), '... and the real one is found again once _load_multi is back'
        if $read;
}
{   # Any other on_item, even a copy of finalize's code, is called as before.
    my %dest;
    my @batches;
    my $p = $RUST->new(\%dest, 0, sub { push @batches, { %{ $_[0] } } });
    is $p->inline_finalize, 0, 'an on_item of our own: not inline';
    $p->parse_from_string("VALUE k 0 1\r\nv\r\nEND\r\n");
    is_deeply \@batches, [ { k => 0 } ], '... it gets every value';
    is $dest{k}, "v\r\n", '... and the value keeps its CRLF for it';
}

SKIP: {   # Before a fork: loaded after Cache::Memcached, this module finds its
          # finalize as it loads, so a forked worker's first get_multi takes the
          # inline path without looking for it again (which would load B and
          # compile the known finalize in every worker); loaded before, the
          # worker looks for it then.
    skip "Cache::Memcached $version is not among the releases read", 2 unless $read;
    my $child = <<'CHILD';
use strict; use warnings;
my ($addr, $ns, $order, @keys) = @ARGV;
my @modules = qw(Cache/Memcached.pm Cache/Memcached/RustXS/GetParser.pm);
require $_ for $order eq 'client first' ? @modules : reverse @modules;
my ($looked, @inline) = (0);
{ no warnings 'redefine';
  my $find = \&Cache::Memcached::RustXS::ClientInternals::finalize_root;
  *Cache::Memcached::RustXS::ClientInternals::finalize_root = sub { $looked++; goto &$find } }
{ package Spy; our @ISA = ('Cache::Memcached::RustXS::GetParser');
  sub new { my $p = shift->SUPER::new(@_); push @inline, $p->inline_finalize; $p } }
my $memd = Cache::Memcached->new({ servers => [$addr], namespace => $ns, parser_class => 'Spy' });
my $pid = fork // die "fork: $!";
if (!$pid) {
    my $got = $memd->get_multi(@keys);
    print "looked $looked, inline @inline, ", scalar(keys %$got), ' values';
    exit 0;
}
waitpid $pid, 0;
CHILD
    my @inc = map { "-I$_" } grep { !ref } @INC;
    my %said;
    for my $order ('client first', 'parser first') {
        open my $out, '-|', $^X, @inc, '-e', $child, $addr, $NS, $order, qw(plain compressed) or die "run: $!";
        $said{$order} = do { local $/; <$out> };
        close $out;
    }
    is $said{'client first'}, 'looked 0, inline 1, 2 values',
        'loaded after Cache::Memcached: a forked worker takes the inline path without looking for finalize';
    is $said{'parser first'}, 'looked 1, inline 1, 2 values', '... loaded before it: the worker looks for it once';
}

done_testing;
