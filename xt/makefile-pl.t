#!/usr/bin/perl
# Makefile.PL follows the CPAN toolchain's conventions where Rust is
# missing or too old: it says what to install and exits 0 without writing a
# Makefile, which CPAN clients report as NA rather than FAIL.
use strict;
use warnings;

use File::Copy ();
use File::Spec ();
use File::Temp ();
use Test::More;

my $dir = File::Temp::tempdir(CLEANUP => 1);
File::Copy::copy($_, File::Spec->catfile($dir, $_)) or die "copy $_: $!" for qw(Makefile.PL Cargo.toml);
for my $sub (qw(perl lib lib/Cache lib/Cache/Memcached)) {
    mkdir File::Spec->catdir($dir, $sub) or die "mkdir $sub: $!";
}
File::Copy::copy('lib/Cache/Memcached/RustXS.pm', "$dir/lib/Cache/Memcached/RustXS.pm") or die $!;
my ($rust_version) = do { local (@ARGV, $/) = ('Cargo.toml'); <> } =~ /^rust-version\s*=\s*"([^"]+)"/m;

# Fake tools: a bin folder with only what the case provides.
sub fake_bin {
    my (%tools) = @_;
    my $bin = File::Temp::tempdir(CLEANUP => 1);
    while (my ($name, $version) = each %tools) {
        open my $fh, '>', "$bin/$name" or die $!;
        print {$fh} "#!/bin/sh\necho '$name $version (fake)'\n";
        close $fh;
        chmod 0755, "$bin/$name";
    }
    return $bin;
}

sub run_makefile_pl {
    my ($bin, %env) = @_;
    unlink "$dir/Makefile";
    local $ENV{PATH} = "$bin:/usr/bin:/bin";
    local @ENV{qw(CARGO RUSTC)} = @env{qw(CARGO RUSTC)};
    my $out = `cd "$dir" && "$^X" Makefile.PL 2>&1`;
    return ($? >> 8, $out, -e "$dir/Makefile");
}

# /usr/bin and /bin must not hold cargo for these cases to mean anything.
plan skip_all => 'cargo or rustc is installed in /usr/bin or /bin'
    if grep { -x "$_/cargo" || -x "$_/rustc" } qw(/usr/bin /bin);

my ($rc, $out, $made) = run_makefile_pl(fake_bin());
is $rc, 0, 'no cargo: exit 0';
ok !$made, 'no cargo: no Makefile';
like $out, qr/cargo was not found.*rustup\.rs/s, 'no cargo: says what to install';

($rc, $out, $made) = run_makefile_pl(fake_bin(cargo => '1.95.0'));
is $rc, 0, 'cargo but no rustc: exit 0';
ok !$made, 'cargo but no rustc: no Makefile';
like $out, qr/rustc was not found/, 'cargo but no rustc: says so';

($rc, $out, $made) = run_makefile_pl(fake_bin(cargo => '1.60.0', rustc => '1.60.0'));
is $rc, 0, 'Rust older than rust-version: exit 0';
ok !$made, 'Rust older than rust-version: no Makefile';
like $out, qr/cargo 1\.60\.0 is older than \Q$rust_version\E/, 'Rust too old: says which and why';

# Debian 12's own packages: cargo 1.65, rustc 1.63; its rustc-web and
# cargo-web are new enough.
my $debian12 = fake_bin(cargo => '1.65.0', rustc => '1.63.0');
($rc, $out, $made) = run_makefile_pl($debian12);
is $rc, 0, "Debian 12's cargo and rustc: exit 0";
ok !$made, "Debian 12's cargo and rustc: no Makefile";
like $out, qr/cargo 1\.65\.0 is older than \Q$rust_version\E/, "Debian 12's cargo: says which";
like $out, qr/apt-get install rustc-web cargo-web/, '... and names the packages that are new enough';
like $out, qr/set CARGO and RUSTC/, '... and how to use tools that are not first in PATH';

# CARGO and RUSTC are the tools checked, not those in PATH.
($rc, $out, $made) = run_makefile_pl(fake_bin(), CARGO => "$debian12/cargo", RUSTC => "$debian12/rustc");
ok !$made, 'CARGO and RUSTC naming old tools: no Makefile';
like $out, qr/cargo 1\.65\.0 is older than/, '... CARGO is the cargo checked';
($rc, $out, $made) = run_makefile_pl(fake_bin(), CARGO => fake_bin(cargo => '1.95.0') . '/cargo', RUSTC => "$debian12/rustc");
like $out, qr/rustc 1\.63\.0 is older than/, '... and RUSTC the rustc checked';

done_testing;
