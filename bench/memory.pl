#!/usr/bin/perl
# Items resident in a 64 MB memcached, per way of writing, in memcached's
# own terms (its curr_items once filled past its memory), and the time per
# value of each way, in the same run.
#
#   perl -Mblib bench/memory.pl       (after perl Makefile.PL && make)
#
# Knobs: BENCH_ROUNDS, BENCH_SECONDS, BENCH_QUICK, BENCH_MEMORY_FAMILIES.
# See bench/README.md ("Memory").
use strict;
use warnings;
use utf8;
use FindBin ();
use lib "$FindBin::Bin/lib", "$FindBin::Bin/../dev/lib";    # dev/lib: helpers shared with the tests
use File::Path ();
use File::Temp ();
use IO::Socket::INET ();
use POSIX ();

use Compress::Zlib ();
use CMRXDev::Corpus qw(corpus_values);
use CMRXBench::Runner qw(now median);

binmode STDOUT, ':encoding(UTF-8)';
STDERR->autoflush(1);
$SIG{INT} = $SIG{TERM} = sub { print STDERR "\ninterrupted\n"; exit 130 };

my $ROOT     = "$FindBin::Bin/..";
my $QUICK    = $ENV{BENCH_QUICK} ? 1 : 0;
my $ROUNDS   = $ENV{BENCH_ROUNDS}  || ($QUICK ? 3 : 15);
my $SECONDS  = $ENV{BENCH_SECONDS} || ($QUICK ? 0.03 : 0.2);
my @FAMILIES = split /,/, ($ENV{BENCH_MEMORY_FAMILIES} || 'gh,npm,compat');   # the JSON families
my $MEMORY_MB = 64;                 # memcached -m
my $THRESHOLD = 100;                # compress_threshold of every writer
my $BATCH     = 500;                # keys per set_multi
my $FILL_FACTOR = 1.5;              # items written per item the model says fit
my $MAX_FILLS = 3;                  # more writes when the server is not full yet
my $CHECKED   = 200;                # values read back from each fill
my $BAR_ITEMS = 2.85;               # the set's items over Fast's default gzip's, all families
my $BAR_DECOMPRESS = 1.5;           # the set's decompression speed over our memGunzip's

for my $m (qw(Cache::Memcached::Fast Cache::Memcached::RustXS::Zlib Cache::Memcached::RustXS::Zstd
              Cache::Memcached::RustXS::Zstd::DictionarySet Cache::Memcached::RustXS::Dict::Memory)) {
    eval "require $m; 1" or die "bench/memory.pl needs $m (perl Makefile.PL && make, then perl -Mblib): "
                              . (split /\n/, $@)[0] . "\n";
}

# ---- the corpus: half trains the set, the other half fills ---------------------

my $corpus = corpus_values("$ROOT/bench/data/values");
my (%train, %fill);
for my $f (@FAMILIES) {
    my $v = $corpus->{$f} or die "no family $f in bench/data/values\n";
    $train{$f} = [ @$v[ grep { $_ % 2 == 0 } 0 .. $#$v ] ];
    $fill{$f}  = [ @$v[ grep { $_ % 2 == 1 } 0 .. $#$v ] ];
}
my $out = "$FindBin::Bin/results";
File::Path::make_path($out);
my $tmp = File::Temp->newdir;
my $dump = "$tmp/train.values";
open my $fh, '>:raw', $dump or die "$dump: $!\n";
for my $f (@FAMILIES) {
    print {$fh} "VALUE $_->[0] 0 " . length($_->[1]) . "\r\n$_->[1]\r\n" for @{ $train{$f} };
}
print {$fh} "END\r\n";
close $fh or die "$dump: $!\n";

# cmrx-dict train --all, no option but where to read and write.
my $set_dir = "$tmp/set";
print STDERR "training the set: cmrx-dict train --all --out-dir DIR (half of the values)\n";
my @inc = map { ('-I', $_) } grep { !ref } @INC;
my $train_log = "$out/memory-train.txt";
my $cmd = join ' ', map { "'$_'" } $^X, @inc, "$ROOT/bin/cmrx-dict", 'train', '--all', '--out-dir', $set_dir, $dump;
system("$cmd > '$train_log' 2>&1") == 0 or die "cmrx-dict train --all failed; see $train_log\n";
my $set = Cache::Memcached::RustXS::Zstd::DictionarySet->read($set_dir);
my %set_entry = map { my $e = $set->current("$_:"); $e ? ($_ => $e) : () } @FAMILIES;

# ---- the ways of writing -------------------------------------------------------------

my %methods = (
    'Fast default (gzip)' => [ sub { ${ $_[1] } = Compress::Zlib::memGzip(${ $_[0] }); 1 },
                               sub { my $c = ${ $_[0] }; ${ $_[1] } = Compress::Zlib::memGunzip($c); defined ${ $_[1] } } ],
    'our gzip'            => Cache::Memcached::RustXS::Zlib::compress_methods(),
    'zstd, no dictionary' => Cache::Memcached::RustXS::Zstd::compress_methods(level => 3),
);
my %set_methods = map {
    ($_ => Cache::Memcached::RustXS::Zstd::compress_methods(dictionaries => $set_dir, prefix => "$_:"))
} keys %set_entry;
my @WAYS = ('Fast default (gzip)', 'our gzip', 'zstd, no dictionary', 'the tuned set');

# The compress_methods pair a way uses for a key of family $f.
sub methods_for {
    my ($way, $f) = @_;
    return $methods{$way} if $methods{$way};
    return $set_methods{$f} || Cache::Memcached::RustXS::Zstd::compress_methods(dictionaries => $set_dir,
                                                                               prefix => "$f:");
}

sub client {
    my ($server, $way, $f) = @_;
    return Cache::Memcached::Fast->new({
        servers => [ $server ], compress_threshold => $THRESHOLD, compress_methods => methods_for($way, $f),
    });
}

# ---- filling a 64 MB memcached ---------------------------------------------------------

my $memory = Cache::Memcached::RustXS::Dict::Memory->new(memory_limit => $MEMORY_MB << 20);

# The fill order: the families' values in turn, each written again and
# again under new keys (the value's key, a colon, a counter).
sub fill_order {
    my (@fams) = @_;
    my @seq;
    my $longest = 0;
    for (@fams) { $longest = @{ $fill{$_} } if @{ $fill{$_} } > $longest }
    for my $i (0 .. $longest - 1) {
        for my $f (@fams) { push @seq, [ $f, @{ $fill{$f}[ $i % @{ $fill{$f} } ] } ] }
    }
    return \@seq;
}

# The stored length and flags of each value of $seq written this way.
sub stored_forms {
    my ($way, $seq) = @_;
    my %cache;
    return [ map {
        my ($f, $key, $value) = @$_;
        $cache{"$f\0$key"} ||= do {
            my ($c) = @{ methods_for($way, $f) };
            my $out;
            my $ok = length $value >= $THRESHOLD && $c->(\$value, \$out) && length $out <= 0.8 * length $value;
            $ok ? [ length $out, 2 ] : [ length $value, 0 ];
        };
    } @$seq ];
}

sub stats {
    my ($addr) = @_;
    my $s = IO::Socket::INET->new(PeerAddr => $addr, Timeout => 5) or die "$addr: $@\n";
    print {$s} "stats\r\n";
    my %st;
    while (defined(my $line = <$s>)) {
        last if $line =~ /^END/;
        $st{$1} = $2 if $line =~ /^STAT (\S+) (\S+)/;
    }
    return \%st;
}

sub start_server {
    require CMRXDev::Memcached;
    return CMRXDev::Memcached->start(args => [ '-m', $MEMORY_MB ]);
}

# Items resident after filling a fresh server past its memory, as memcached
# counts them, with the model's figure beside.
sub fill {
    my ($way, $fams) = @_;
    my $seq = fill_order(@$fams);
    my $forms = stored_forms($way, $seq);
    # What fits, roughly: the memory over the mean chunk of one round.
    my $chunks = 0;
    $chunks += $memory->item_memory(length($seq->[$_][1]) + 8, @{ $forms->[$_] }) for 0 .. $#$seq;
    my $count = int($FILL_FACTOR * ($MEMORY_MB << 20) / ($chunks / @$seq));
    my $server = start_server();
    my %client = map { ($_ => client($server->address, $way, $_)) } @$fams;
    my ($n, @written, $st) = (0);
    for my $pass (1 .. $MAX_FILLS) {
        my @batch;
        for my $i (1 .. $count) {
            my ($f, $key, $value) = @{ $seq->[ $n % @$seq ] };
            my $k = sprintf '%s:%07d', $key, $n++;
            push @batch, [ $k, $value ];
            push @written, [ length $k, @{ $forms->[ ($n - 1) % @$seq ] } ];
            if (@batch == $BATCH || $i == $count) {
                my %by;
                push @{ $by{ (split /:/, $_->[0])[0] } }, $_ for @batch;
                $client{$_}->set_multi(@{ $by{$_} }) for keys %by;
                @batch = ();
            }
        }
        $st = stats($server->address);
        last if $st->{evictions} > 0;
    }
    # The last values written read back whole.
    my $wrong = 0;
    for my $j ($n - $CHECKED .. $n - 1) {
        my ($f, $key, $value) = @{ $seq->[ $j % @$seq ] };
        my $got = $client{$f}->get(sprintf '%s:%07d', $key, $j);
        $wrong++ unless defined $got && $got eq $value;
    }
    $server->stop;
    return { items => 0 + $st->{curr_items}, evictions => 0 + $st->{evictions}, written => $n,
             model => $memory->resident_items(\@written), wrong => $wrong,
             stored_bytes => 0 + $st->{bytes} };
}

my @ROWS = ((map { [ $_, [$_] ] } $QUICK ? () : @FAMILIES), [ 'all three, a prefix each', [@FAMILIES] ]);
my %items;
for my $row (@ROWS) {
    my ($name, $fams) = @$row;
    for my $way (@WAYS) {
        print STDERR "filling a ${MEMORY_MB} MB memcached: $name, $way\n";
        $items{$name}{$way} = fill($way, $fams);
    }
}

# ---- time per value, compress and decompress, interleaved rounds ----------------------

my @values = map { my $f = $_; map { [ $f, $_->[1] ] } @{ $fill{$f} } } @FAMILIES;
my %timing;
for my $dir (qw(compress decompress)) {
    my %stored;
    for my $way (@WAYS) {
        $stored{$way} = [ map {
            my ($c) = @{ methods_for($way, $_->[0]) };
            my $o;
            $c->(\$_->[1], \$o) or die "$way: compress failed\n";
            $o;
        } @values ];
    }
    my %op;
    for my $way (@WAYS) {
        my @m = map { methods_for($way, $_->[0]) } @values;
        my $st = $stored{$way};
        $op{$way} = $dir eq 'compress'
            ? sub { my $o; $m[$_]->[0]->(\$values[$_][1], \$o) for 0 .. $#values }
            : sub { my $o; $m[$_]->[1]->(\$st->[$_], \$o) for 0 .. $#values };
    }
    my %calls = map {
        my $t0 = now; $op{$_}->(); my $once = now - $t0;
        ($_ => ($once > 0 ? int($SECONDS / $once) + 1 : 1));
    } @WAYS;
    my %samples;
    for my $round (0 .. $ROUNDS - 1) {
        for my $j (0 .. $#WAYS) {
            my $way = $WAYS[ ($j + $round) % @WAYS ];
            my $t0 = now;
            $op{$way}->() for 1 .. $calls{$way};
            push @{ $samples{$way} }, (now - $t0) / $calls{$way} / @values;
        }
    }
    $timing{$dir}{$_} = median(@{ $samples{$_} }) for @WAYS;
}

# ---- the table ----------------------------------------------------------------------------

my $base = 'Fast default (gzip)';
printf "Items resident in a %d MB memcached (-m %d, filled past its memory through Cache::Memcached::Fast, "
     . "its own curr_items), %s values of bench/data/values: the set trained by `cmrx-dict train --all` "
     . "(no other option) on half of them, every writer filled with the other half\n\n",
    $MEMORY_MB, $MEMORY_MB, join('/', @FAMILIES);
my @head = ('values', map { ($_, 'x') } @WAYS);
my @lines;
for my $row (@ROWS) {
    my $r = $items{ $row->[0] };
    push @lines, [ $row->[0], map { (commas($r->{$_}{items}), sprintf('%.2fx', $r->{$_}{items} / $r->{$base}{items})) } @WAYS ];
}
table(\@head, @lines);
my $all = $items{ $ROWS[-1][0] };
my $items_ratio = $all->{'the tuned set'}{items} / $all->{$base}{items};
my $c_ratio = $timing{compress}{'Fast default (gzip)'} / $timing{compress}{'the tuned set'};
my $d_ratio = $timing{decompress}{'our gzip'} / $timing{decompress}{'the tuned set'};
print "\nMicroseconds per value (the fill halves of all three, medians of $ROUNDS interleaved rounds)\n\n";
table([ 'way', 'compress', 'decompress' ],
      map { [ $_, sprintf('%.1f', 1e6 * $timing{compress}{$_}), sprintf('%.1f', 1e6 * $timing{decompress}{$_}) ] } @WAYS);
my @bars = (
    [ sprintf('items, all three: the set %.2fx Fast default gzip', $items_ratio), $items_ratio >= $BAR_ITEMS, ">= $BAR_ITEMS" ],
    [ sprintf('compress: the set %.2fx as fast as memGzip', $c_ratio), $c_ratio >= 1, '>= 1.00' ],
    [ sprintf('decompress: the set %.2fx as fast as our memGunzip', $d_ratio), $d_ratio >= $BAR_DECOMPRESS, ">= $BAR_DECOMPRESS" ],
);
print "\nBars\n\n";
printf "  %s %s (bar %s)\n", ($_->[1] ? '✓' : '✗'), $_->[0], $_->[2] for @bars;
print "\nThe set\n\n";
table([ 'prefix', 'ID', 'level', 'dictionary bytes', 'method', 'held-out memory saved vs memGzip' ],
      map { my $e = $set_entry{$_}; [ "$_:", $e->{id}, $e->{level}, $e->{size}, $e->{method} || '-', ($e->{memory_savings} // '-') . ' %' ] }
      @FAMILIES);
my $fb = $set->fallback;
print "  (keys of other prefixes: $fb->{method} level $fb->{level})\n";
print "\nChecks: every fill read back its last $CHECKED values whole: ",
      (join(', ', map { my $r = $_->[0]; map { $items{$r}{$_}{wrong} ? "$r/$_: $items{$r}{$_}{wrong} WRONG" : () } @WAYS } @ROWS) || 'yes'),
      "; the model (Dict::Memory) against curr_items: ",
      join(', ', map { my $r = $_->[0]; map { my $x = $items{$r}{$_}; $x->{model} == $x->{items} ? () : "$r/$_ model $x->{model}" } @WAYS } @ROWS) || 'equal everywhere',
      "\nThe training's report: bench/results/memory-train.txt\n";

if (eval { require JSON::PP; 1 }) {
    open my $j, '>', "$out/memory.json" or die "$out/memory.json: $!\n";
    print {$j} JSON::PP->new->canonical->pretty->encode({
        date => POSIX::strftime('%Y-%m-%dT%H:%M:%SZ', gmtime), perl => sprintf('%vd', $^V),
        memory_mb => $MEMORY_MB, families => \@FAMILIES, rounds => $ROUNDS, items => \%items,
        us_per_value => { map { my $d = $_; ($d => { map { ($_ => 1e6 * $timing{$d}{$_}) } @WAYS }) } keys %timing },
        bars => [ map { { what => $_->[0], met => $_->[1] ? JSON::PP::true() : JSON::PP::false(), bar => $_->[2] } } @bars ],
        set => [ $set->entries ], fallback => $fb,
    });
    close $j;
    print "results: bench/results/memory.json\n";
}

sub commas { my $n = reverse shift; $n =~ s/(\d{3})(?=\d)/$1,/g; return scalar reverse $n }

sub table {
    my ($head, @rows) = @_;
    my @w;
    for my $r ($head, @rows) { for (0 .. $#$r) { $w[$_] = length $r->[$_] if !defined $w[$_] || length $r->[$_] > $w[$_] } }
    for my $r ($head, @rows) {
        print '  ', join('  ', map { $_ ? sprintf('%*s', $w[$_], $r->[$_]) : sprintf('%-*s', $w[$_], $r->[$_]) } 0 .. $#$r), "\n";
    }
}
