package CMRXTest::DictCorpus;

# Test helper: the values behind t/data/cmrx-dict/transcript, a recorded
# conversation of a real memcached holding them with cmrx-dict's modules,
# and its playback from a loopback fake server. See the POD at the end.

use strict;
use warnings;

use Exporter 'import';
use CMRXTest::FakeServer;

our $VERSION   = '0.01';
our @EXPORT_OK = qw(corpus_items dictionary_samples read_transcript write_transcript
                    serve_transcript transcript_replies $TRANSCRIPT $DICTIONARY);

our $TRANSCRIPT = 't/data/cmrx-dict/transcript';
our $DICTIONARY = 't/data/cmrx-dict/dz.dict';

my @PLANS = qw(free pro team enterprise);
my @FORMS = qw(raw gzip zstd zlib storable storable_gzip);

sub user_json {
    my ($i) = @_;
    return sprintf '{"id":%d,"name":"user%d","email":"user%d@example.com","plan":"%s",'
                 . '"tags":["t%d","t%d"],"score":%d,"active":%s,"created":"2026-%02d-%02dT10:%02d:00Z"}',
        $i, $i * 7, $i * 7, $PLANS[$i % 4], $i % 5, $i % 3, ($i * 37) % 1000,
        ($i % 3 ? 'true' : 'false'), 1 + $i % 12, 1 + $i % 28, $i % 60;
}

sub page_html {
    my ($i) = @_;
    return qq{<div class="card" id="c$i"><h2>Item $i</h2><p>}
         . join(' ', map { "word" . (($i * $_) % 17) } 1 .. 30)
         . qq{</p><a href="/items/$i">more</a></div>};
}

# The samples the dictionary of t/data/cmrx-dict/dz.dict was trained on,
# and the values stored with it.
sub dictionary_samples {
    return map { qq({"id":$_,"kind":"dz","name":"thing$_","flags":["x","y"],"n":) . ($_ * 13 % 97) . '}' }
           1 .. 200;
}

# What was stored: [ key, form, value ] in the order of storing. Forms:
# raw, gzip (memGzip), zstd (level 3), zlib (compress), storable
# (nfreeze of \value), storable_gzip (memGzip of nfreeze of [value]) cycle
# through each of user and page; zstd_dict is compressed with dz.dict;
# stored forms with their bytes given: [ key, 'bytes', bytes, flags ].
# 'odd key' is set through the binary protocol (a text get cannot name it);
# gone:1 is deleted after the listing.
sub corpus_items {
    my @items;
    for my $i (1 .. 120) { push @items, [ sprintf('user:%03d', $i), $FORMS[$i % 6], user_json($i) ] }
    for my $i (1 .. 12)  { push @items, [ sprintf('page:%02d', $i), $FORMS[$i % 6], page_html($i) ] }
    my @dz = dictionary_samples();
    push @items, map { [ sprintf('dz:%02d', $_), 'zstd_dict', $dz[$_] ] } 0 .. 9;
    push @items, [ 'bad:plain', 'bytes', 'this was never compressed', 2 ],
                 [ 'bad:gzip',  'bytes', "\x1f\x8b\x08\x00" . ('x' x 40), 2 ],
                 [ 'bad:zlib',  'bytes', "\x78\x9c" . ('y' x 30), 2 ],
                 [ 'bad:zstd',  'bytes', "\x28\xb5\x2f\xfd\x20\x05" . 'hello', 2 ];
    push @items, map { [ "tiny:$_", 'raw', "a tiny value number $_" ] } 1 .. 3;
    push @items, [ 'nodelimiter', 'raw', 'a value whose key has no colon' ],
                 [ 'odd key', 'raw', 'stored through the binary protocol' ],
                 [ 'gone:1', 'raw', 'deleted between the listing and the get' ];
    return @items;
}

# The transcript: REQUEST <n>\n<n bytes>\nREPLY <n>\n<n bytes>\n ..., after
# comment lines starting with '#'.
sub read_transcript {
    my ($file) = @_;
    $file = $TRANSCRIPT unless defined $file;
    open my $fh, '<:raw', $file or die "$file: $!";
    my $text = do { local $/; <$fh> };
    my @pairs;
    pos($text) = 0;
    $text =~ /\G(?:#[^\n]*\n)*/gc;
    while (pos($text) < length $text) {
        my @pair;
        for my $what (qw(REQUEST REPLY)) {
            $text =~ /\G\Q$what\E ([0-9]+)\n/gc or die "$file: no $what at byte " . pos($text);
            my $n = $1;
            push @pair, substr($text, pos($text), $n);
            pos($text) += $n;
            $text =~ /\G\n/gc or die "$file: no newline after the $what at byte " . pos($text);
        }
        push @pairs, \@pair;
    }
    return @pairs;
}

sub write_transcript {
    my ($file, $comment, @pairs) = @_;
    open my $fh, '>:raw', $file or die "$file: $!";
    print {$fh} map { "# $_\n" } split /\n/, $comment;
    for my $pair (@pairs) {
        printf {$fh} "REQUEST %d\n%s\nREPLY %d\n%s\n", length $pair->[0], $pair->[0], length $pair->[1], $pair->[1];
    }
    close $fh or die "$file: $!";
    return;
}

# { request => reply } of the transcript.
sub transcript_replies {
    my %replies = map { ($_->[0] => $_->[1]) } read_transcript(@_);
    return \%replies;
}

# A fake memcached on loopback that answers as the transcript says (ERROR
# to anything else); extra => { request => reply } adds or replaces answers.
sub serve_transcript {
    my (%opt) = @_;
    my $answers = transcript_replies($opt{file});
    %$answers = (%$answers, %{ $opt{extra} || {} });
    return CMRXTest::FakeServer->start(answers => $answers);
}

1;

__END__

=head1 NAME

CMRXTest::DictCorpus - the values, the recorded memcached answers and their playback, for cmrx-dict's module tests

=head1 SYNOPSIS

    use lib 't/lib';
    use CMRXTest::DictCorpus qw(corpus_items serve_transcript);

    my $fake = serve_transcript();    # answers as the recorded memcached did
    my $server = Cache::Memcached::RustXS::Dict::NodeReader->connect($fake->address);
    my %value_of = map { ($_->[0] => $_->[2]) } corpus_items();

=head1 DESCRIPTION

C<script/record-dict-transcript> stores C<corpus_items> in a real memcached
(in their stored forms), then sends it what cmrx-dict's modules send on a
report of all its keys (C<lru_crawler metadump all>, the C<get>s of every
prefix, 100 keys each, in key order) and C<stats settings> and C<stats
slabs>, and writes each request with the server's reply to
F<t/data/cmrx-dict/transcript>. Tests play it back with C<serve_transcript>
and check what the modules make of it against the values here, without a
memcached.

=cut
